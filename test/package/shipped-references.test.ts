import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { danglingReferences } from './shipped-references.js';

let folder: string | undefined;
afterEach(() => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

function packageWith(files: Record<string, string>): string {
  folder = mkdtempSync(join(tmpdir(), 'troupe-shipped-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  return folder;
}

describe('danglingReferences', () => {
  it('finds what a build with source maps but without src/ would ship', () => {
    const root = packageWith({
      'package.json': JSON.stringify({ main: './dist/index.js', types: './dist/index.d.ts', exports: { '.': { import: './dist/index.js' }, './gone': './dist/gone.js' } }),
      'dist/index.js': "import { a } from './a.js';\nexport * from './missing.js';\n//# sourceMappingURL=index.js.map",
      'dist/index.js.map': JSON.stringify({ version: 3, sources: ['../src/index.ts'], mappings: '' }),
      'dist/index.d.ts': "export { a } from './a.js';",
      'dist/a.js': 'export const a = 1;',
      'dist/a.d.ts': 'export declare const a = 1;',
      'README.md': '[tools](docs/tools.md), [the web](https://example.com), [here](#top)',
      'page/index.html': '<script type="module" src="./app.js"></script><link rel="stylesheet" href="style.css">',
      'page/style.css': '',
    });
    expect(danglingReferences(root).sort()).toEqual([
      'package.json: package.json → dist/gone.js is not shipped',
      'dist/index.js: import "./missing.js" → dist/missing.js is not shipped',
      'dist/index.js.map: source map → src/index.ts is not shipped',
      'README.md: link "docs/tools.md" → docs/tools.md is not shipped',
      'page/index.html: "./app.js" → page/app.js is not shipped',
    ].sort());
  });
});
