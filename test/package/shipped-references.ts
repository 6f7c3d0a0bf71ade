import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * References from one shipped file to another that the package does not ship: what a user's
 * tools would trip over (a source map naming missing sources, an import of a missing module, a
 * link in the docs to nowhere). Read from the package as installed, so `files` and `.npmignore`
 * have had their say.
 *
 * Checked: `package.json`'s `main`, `types`, `bin` and `exports`; relative imports, exports and
 * `/// <reference path>` in `.js` and `.d.ts` files; `sourceMappingURL` comments and a map's
 * `sources`; relative links in Markdown; `src` and `href` in HTML. Paths written in prose (the
 * docs' "Sources" lists name repository files) are not references.
 */
export function danglingReferences(packageRoot: string): string[] {
  const problems: string[] = [];
  const report = (from: string, target: string, what: string) => {
    if (!existsSync(target)) problems.push(`${relative(packageRoot, from)}: ${what} → ${relative(packageRoot, target)} is not shipped`);
  };

  const manifestPath = join(packageRoot, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
  for (const target of manifestTargets(manifest)) report(manifestPath, resolve(packageRoot, target), 'package.json');

  for (const file of allFiles(packageRoot)) {
    const text = () => readFileSync(file, 'utf8');
    if (file.endsWith('.js') || file.endsWith('.d.ts')) {
      const source = text();
      for (const specifier of relativeSpecifiers(source)) {
        const target = resolve(dirname(file), specifier);
        // A declaration file's `./x.js` is typed by `./x.d.ts`.
        const candidates = file.endsWith('.d.ts') ? [target, target.replace(/\.js$/, '.d.ts')] : [target];
        if (!candidates.some((candidate) => existsSync(candidate))) report(file, target, `import "${specifier}"`);
      }
      const map = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(source)?.[1];
      if (map !== undefined && !map.startsWith('data:')) report(file, resolve(dirname(file), map), 'sourceMappingURL');
    } else if (file.endsWith('.map')) {
      const { sources = [], sourceRoot = '' } = JSON.parse(text()) as { sources?: string[]; sourceRoot?: string };
      for (const source of sources) report(file, resolve(dirname(file), sourceRoot, source), 'source map');
    } else if (file.endsWith('.md')) {
      for (const [, link] of text().matchAll(/\]\(([^)\s]+)\)/g)) {
        const path = link!.split('#')[0]!;
        if (path === '' || /^[a-z][a-z0-9+.-]*:/i.test(path)) continue;
        report(file, resolve(dirname(file), decodeURI(path)), `link "${link}"`);
      }
    } else if (file.endsWith('.html')) {
      for (const [, link] of text().matchAll(/\s(?:src|href)="([^"]+)"/g)) {
        const path = link!.split(/[?#]/)[0]!;
        if (path === '' || /^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('/')) continue;
        report(file, resolve(dirname(file), path), `"${link}"`);
      }
    }
  }
  return problems;
}

function manifestTargets(manifest: Record<string, unknown>): string[] {
  const targets: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') targets.push(value);
    else if (typeof value === 'object' && value !== null) for (const entry of Object.values(value)) collect(entry);
  };
  for (const key of ['main', 'types', 'bin', 'exports']) collect(manifest[key]);
  return targets;
}

/** Relative module specifiers of static and dynamic imports, re-exports and reference paths. */
function relativeSpecifiers(source: string): string[] {
  const found = new Set<string>();
  const patterns = [
    /(?:^|[\s;])(?:import|export)\s[^'"]*?\sfrom\s*['"](\.{1,2}\/[^'"]+)['"]/gm,
    /(?:^|[\s;])import\s*['"](\.{1,2}\/[^'"]+)['"]/gm,
    /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
    /\/\/\/\s*<reference\s+path=["']([^"']+)["']/g,
  ];
  for (const pattern of patterns) for (const [, specifier] of source.matchAll(pattern)) found.add(specifier!);
  return [...found];
}

function allFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .map((path) => join(folder, path))
    .filter((path) => !path.includes('/node_modules/') && statSync(path).isFile());
}
