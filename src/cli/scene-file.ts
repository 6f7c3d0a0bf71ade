import { statSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { failure, type Outcome } from '../outcome.js';
import { importScene, type LoadedScene, type LoadProblem } from './scene-loader.js';

/** Extensions of scene files: JavaScript, and TypeScript (loaded through tsx). */
const SCRIPT = /\.(?:[cm]?js|[cm]?ts)$/i;
const TYPESCRIPT = /\.[cm]?ts$/i;
// Run from the sources (tsx's loader is already in place), this module is .ts itself.
const UNDER_TSX = import.meta.url.endsWith('.ts');

/**
 * Whether `troupe run <argument>` names a scene file rather than a scene of the scenes folder: a
 * path (it has a `/`, or a `\` on Windows) or a file name with a script's extension.
 *
 * @example
 * isScenePath('./scenes/duel.ts'); // true
 * isScenePath('tavern');           // false
 */
export function isScenePath(argument: string): boolean {
  return /[\\/]/.test(argument) || SCRIPT.test(argument);
}

/**
 * Loads a scene file (`troupe run ./duel.ts`): a module that exports `scene` made with
 * `defineScene`, as a scene folder's `index` does. JavaScript is imported as it is; TypeScript
 * through tsx's `tsImport`, scoped to this one import (the rest of the process keeps Node's own
 * loader): Node 20 cannot strip types, and Node 22's type stripping neither maps the `.js`
 * specifiers a NodeNext project writes to its `.ts` files nor reads tsconfig, which tsx does.
 * The scene is named after the file (`duel`).
 */
export async function loadSceneFile(path: string, cwd: string = process.cwd()): Promise<Outcome<LoadedScene, LoadProblem>> {
  const absolute = resolve(cwd, path);
  if (!SCRIPT.test(absolute)) return failure({ kind: 'usage', message: `${path} is not a scene file: give a .ts or .js file (or a scene name, see: troupe list)` });
  let file;
  try {
    file = statSync(absolute);
  } catch {
    return failure({ kind: 'usage', message: `no scene file ${path} (looked for ${absolute})` });
  }
  if (!file.isFile()) return failure({ kind: 'usage', message: `${path} is not a file` });
  const url = pathToFileURL(absolute);
  const where = { name: basename(absolute, extname(absolute)), folder: new URL('./', url), file: path, source: { kind: 'file' as const, path: absolute }, code: absolute };
  if (!TYPESCRIPT.test(absolute) || UNDER_TSX) return importScene(where, () => import(url.href));
  return importScene(where, async () => {
    // Loaded only for a TypeScript scene: esbuild is not started for anything else.
    const { tsImport } = await import('tsx/esm/api');
    return tsImport(url.href, import.meta.url);
  });
}
