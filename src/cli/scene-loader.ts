import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { failure, success, type Outcome } from '../outcome.js';
import type { SceneRecipe } from '../bus/event-data.js';
import { defineScene, type SceneDefinition } from '../scene/define-scene.js';
import { suggestName } from '../tools/suggest-name.js';
import { errorText } from './error-text.js';

/** A scene folder whose `index` module exported a valid definition. */
export type LoadedScene = {
  name: string;
  /** The folder, for trimming stacks to the scene's own frames. */
  folder: URL;
  /** How messages name the module: `scenes/tavern/index.ts`. */
  file: string;
  /** Where it came from, as a session log's recipe says it (so `troupe resume` finds it again). */
  source: SceneRecipe['source'];
  /** The scene's code on disk: its folder, or its one file (what `definitionHash` reads). */
  code: string;
  definition: SceneDefinition;
};

/** Why a scene could not be loaded: the user asked for something wrong, or the scene is broken. */
export type LoadProblem = { kind: 'usage' | 'broken'; message: string };

// Both from src/cli (tsx) and dist/src/cli (built), the scenes folder is two levels up.
const DEFAULT_SCENES_DIR = new URL('../../scenes/', import.meta.url);
// Under tsx this module is .ts and scene sources load directly; once built, the compiled .js.
const OWN_EXTENSION = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
const NAME = /^[a-z0-9][a-z0-9_-]*$/i;

/** The package's own scenes folder (the default when neither a host nor TROUPE_SCENES_DIR names one). */
export const SHIPPED_SCENES_DIR: URL = DEFAULT_SCENES_DIR;

/**
 * The folder scenes are read from: the `scenesDir` a host passed, else `TROUPE_SCENES_DIR`, else
 * the package's own `scenes/`. Always a directory URL (trailing slash), so names resolve inside it.
 */
export function scenesDirectory(given: string | URL | undefined, env: Readonly<Record<string, string | undefined>>): URL {
  const chosen = given ?? (env.TROUPE_SCENES_DIR === undefined || env.TROUPE_SCENES_DIR === '' ? undefined : env.TROUPE_SCENES_DIR);
  if (chosen === undefined) return DEFAULT_SCENES_DIR;
  const url = chosen instanceof URL ? chosen : pathToFileURL(chosen);
  return url.href.endsWith('/') ? url : new URL(`${url.href}/`);
}

/** The names of the scene folders (those with an `index.ts` or `index.js`), sorted. */
export async function sceneNames(dir: URL): Promise<Outcome<string[], LoadProblem>> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    return failure({ kind: 'usage', message: `cannot read the scenes folder ${fileURLToPath(dir)}: ${(error as Error).message}` });
  }
  const names = entries
    .filter((entry) => entry.isDirectory() && NAME.test(entry.name) && indexFile(dir, entry.name) !== undefined)
    .map((entry) => entry.name)
    .sort((a, b) => a.localeCompare(b));
  return success(names);
}

/**
 * Imports `scenes/<name>/index` and checks that it exports `scene` made with `defineScene`. An
 * unknown name is a usage problem (the message lists the scenes there are); a module that throws
 * or exports the wrong thing is a broken scene.
 */
export async function loadScene(dir: URL, name: string): Promise<Outcome<LoadedScene, LoadProblem>> {
  if (!NAME.test(name)) return failure({ kind: 'usage', message: `"${name}" is not a scene name (letters, digits, "-" and "_") nor a scene file (./path/scene.ts or .js)` });
  const names = await sceneNames(dir);
  if (!names.ok) return names;
  const file = indexFile(dir, name);
  if (!names.value.includes(name) || file === undefined) {
    const nearest = suggestName(name, names.value);
    const hint = nearest === undefined ? '' : ` (did you mean ${nearest}?)`;
    return failure({ kind: 'usage', message: `no scene "${name}" in ${basename(fileURLToPath(dir))}/${hint}. Available: ${names.value.join(', ') || 'none'}; or give a scene file: troupe run ./my-scene.ts` });
  }
  const folder = new URL(`${name}/`, dir);
  const shown = `${basename(fileURLToPath(dir))}/${name}/${file}`;
  const source: SceneRecipe['source'] = dir.href === DEFAULT_SCENES_DIR.href ? { kind: 'shipped' } : { kind: 'folder', path: fileURLToPath(dir) };
  return importScene({ name, folder, file: shown, source, code: fileURLToPath(folder) }, () => import(new URL(file, folder).href));
}

/**
 * Imports a scene module with `load` and checks that it exports `scene` made with `defineScene`:
 * a module that throws, or exports anything else, is a broken scene.
 */
export async function importScene(where: Omit<LoadedScene, 'definition'>, load: () => Promise<unknown>): Promise<Outcome<LoadedScene, LoadProblem>> {
  const { folder, file: shown } = where;
  let module: { scene?: unknown };
  try {
    module = (await load()) as { scene?: unknown };
  } catch (error) {
    return failure({ kind: 'broken', message: `${shown} failed to load:\n${errorText(error, folder)}` });
  }
  const exported = module.scene;
  if (exported === null || typeof exported !== 'object' || typeof (exported as { create?: unknown }).create !== 'function') {
    const found = Object.keys(module).length === 0 ? 'nothing' : Object.keys(module).join(', ');
    return failure({ kind: 'broken', message: `${shown} must export \`scene\` made with defineScene (it exports ${found})` });
  }
  try {
    return success({ ...where, definition: defineScene(exported as SceneDefinition) });
  } catch (error) {
    return failure({ kind: 'broken', message: `${shown}: ${(error as Error).message}` });
  }
}

/** `index.ts` or `index.js`, preferring the kind this module itself was loaded as. */
function indexFile(dir: URL, name: string): string | undefined {
  for (const extension of OWN_EXTENSION === 'ts' ? ['ts', 'js'] : ['js', 'ts']) {
    if (existsSync(new URL(`${name}/index.${extension}`, dir))) return `index.${extension}`;
  }
  return undefined;
}
