import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCK_FLAGS, docsBlocks, type CodeBlock } from './code-blocks.js';
import { knownCommands, shellProblems } from './shell-commands.js';

/**
 * Every code block of README.md and docs/ works as written (the convention is in code-blocks.ts
 * and docs/writing-docs.md): the `ts` blocks are written to a scratch project whose tsconfig
 * extends the repository's and maps `troupe` and its subpaths to src/, typechecked together in
 * one tsc run, and run one after another in one tsx process unless marked `typecheck`; the `sh`
 * blocks name only scripts, commands and flags that exist.
 */

const root = resolve(import.meta.dirname, '../..');
const execFileAsync = promisify(execFile);
const blocks = docsBlocks(root);
const programs = blocks.filter((block) => block.language === 'ts' || block.language === 'js');
const shells = blocks.filter((block) => block.language === 'sh');

/** The scratch file of a block: named after its page and line, so errors point back to it. */
const fileOf = (block: CodeBlock) => `${block.file.replace(/[/.]/g, '_')}_L${block.line}.${block.language === 'js' ? 'mjs' : 'ts'}`;
const label = (block: CodeBlock) => `${block.file}:${block.line}${block.flags.length > 0 ? ` (${block.flags.join(' ')})` : ''}`;

let work: string;
const typeErrors = new Map<string, string[]>();
let runResults: Record<string, string> = {};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'troupe-docs-'));
  // Bare imports (zod, p-limit, …) resolve from the repository's node_modules.
  symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'dir');
  writeFileSync(join(work, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  // tsx reads tsconfig.json (modules as they run); tsc the check config (types, .d.ts beside .js).
  writeFileSync(join(work, 'tsconfig.json'), JSON.stringify(scratchTsconfig('run'), null, 2));
  writeFileSync(join(work, 'tsconfig.check.json'), JSON.stringify(scratchTsconfig('check'), null, 2));
  mkdirSync(join(work, 'blocks'));
  for (const block of programs) {
    // `export {}` makes every block a module, so blocks never share top-level names.
    writeFileSync(join(work, 'blocks', fileOf(block)), `${block.code}\nexport {};\n`);
  }
  const runnable = programs.filter((block) => !block.flags.includes('typecheck')).map((block) => join(work, 'blocks', fileOf(block)));
  const results = join(work, 'results.json');
  const [compiled] = await Promise.all([
    execFileAsync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(work, 'tsconfig.check.json')], { cwd: work }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    ),
    execFileAsync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'test/docs/run-blocks.mjs'), results, ...runnable], {
      cwd: work,
      maxBuffer: 16 * 1024 * 1024,
    }),
  ]);
  for (const line of compiled.split('\n')) {
    const match = /blocks\/([^(]+)\((\d+),(\d+)\): (error .*)$/.exec(line);
    if (match === null) continue;
    const list = typeErrors.get(match[1]!) ?? [];
    list.push(`line ${match[2]}: ${match[4]}`);
    typeErrors.set(match[1]!, list);
  }
  // Errors outside the blocks (in src/, say) would otherwise pass unnoticed.
  const elsewhere = compiled.split('\n').filter((line) => /error TS/.test(line) && !/blocks\//.test(line));
  if (elsewhere.length > 0) typeErrors.set('(outside the blocks)', elsewhere);
  runResults = JSON.parse(readFileSync(results, 'utf8')) as Record<string, string>;
}, 60_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/**
 * The repository's compiler options, with `troupe` and each subpath of package.json mapped to src/:
 * `./dist/src/x/index.js` → `<root>/src/x/index.js`, which tsc reads as `index.ts` and tsx loads as
 * the `.ts` or the `.js`. For checking, a plain-JavaScript module with typings beside it (the
 * panel) maps to its `.d.ts`, so `js` blocks can be checked without checking src's JavaScript too.
 */
function scratchTsconfig(purpose: 'run' | 'check'): object {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { import: string }> };
  const paths: Record<string, string[]> = {};
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'string') continue;
    const source = join(root, target.import.replace(/^\.\/dist\//, ''));
    const typings = source.replace(/\.js$/, '.d.ts');
    const checked = purpose === 'check' && !existsSync(source.replace(/\.js$/, '.ts')) && existsSync(typings) ? typings : source;
    paths[subpath === '.' ? 'troupe' : `troupe/${subpath.slice(2)}`] = [checked];
  }
  return {
    extends: join(root, 'tsconfig.json'),
    compilerOptions: { noEmit: true, rootDir: '/', allowJs: true, checkJs: true, paths },
    include: ['blocks'],
  };
}

describe('the docs’ code blocks', () => {
  it('carry only known flags', () => {
    const unknown = blocks.filter((block) => block.flags.some((flag) => !BLOCK_FLAGS.includes(flag))).map(label);
    expect(unknown).toEqual([]);
  });

  it('have no type errors outside the blocks themselves', () => {
    expect(typeErrors.get('(outside the blocks)') ?? []).toEqual([]);
  });

  it.each(programs.map((block) => [label(block), block] as const))('%s typechecks, and runs unless marked typecheck', (_label, block) => {
    expect(typeErrors.get(fileOf(block)) ?? []).toEqual([]);
    if (block.flags.includes('typecheck')) return;
    const result = runResults[join(work, 'blocks', fileOf(block))];
    expect(result).toBe('ok');
  });

  it.each(shells.map((block) => [label(block), block] as const))('%s names real scripts, commands and flags', async (_label, block) => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(await shellProblems(block.code, knownCommands(manifest.scripts))).toEqual([]);
  });

  it('found the blocks (the extraction itself works)', () => {
    expect(programs.length).toBeGreaterThan(30);
    expect(shells.length).toBeGreaterThan(5);
    expect(existsSync(join(root, 'docs/writing-docs.md'))).toBe(true);
  });
});
