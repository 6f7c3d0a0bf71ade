import { pathToFileURL } from 'node:url';
import type { JsonValue, SceneRecipe } from '../bus/event-data.js';
import { failure, success, type Outcome } from '../outcome.js';
import { definitionHash } from '../record/definition-hash.js';
import type { RunFlags } from './run-flags.js';
import { loadSceneFile } from './scene-file.js';
import { loadScene, SHIPPED_SCENES_DIR, type LoadedScene, type LoadProblem } from './scene-loader.js';

/**
 * What a `troupe run --log` writes into its log's first line: the scene and where it came from,
 * its options, seed, ticks and model, how approvals were answered, the MCP servers, and the hash
 * of the scene's code — everything `troupe resume` and `troupe replay` need to build it again.
 */
export function sceneRecipe(loaded: LoadedScene, flags: RunFlags, seed: number, ticks: number): SceneRecipe {
  const recipe: SceneRecipe = {
    scene: loaded.name,
    source: loaded.source,
    options: flags.options as Record<string, JsonValue>,
    seed,
    ticks,
    definitionHash: definitionHash(loaded.code),
    approve: flags.approve,
  };
  if (flags.model !== undefined) recipe.model = flags.protocol === undefined ? { spec: flags.model } : { spec: flags.model, protocol: flags.protocol };
  if (flags.mcp.length > 0) recipe.mcp = flags.mcp;
  if (flags.checkpoints !== undefined) recipe.checkpoints = flags.checkpoints === 0 ? false : { everyTicks: flags.checkpoints };
  return recipe;
}

/** Loads the scene a recipe names, from where the run found it, and hashes its code as it is now. */
export async function loadRecipeScene(recipe: SceneRecipe): Promise<Outcome<LoadedScene & { hash: string }, LoadProblem>> {
  const { source, scene } = recipe;
  let loaded: Outcome<LoadedScene, LoadProblem>;
  if (source.kind === 'file' && source.path !== undefined) loaded = await loadSceneFile(source.path);
  else if (source.kind === 'folder' && source.path !== undefined) loaded = await loadScene(pathToFileURL(`${source.path.replace(/[\\/]$/, '')}/`), scene);
  else if (source.kind === 'shipped') loaded = await loadScene(SHIPPED_SCENES_DIR, scene);
  else return failure({ kind: 'broken', message: `the log's recipe names scene "${scene}" without where it is (source ${JSON.stringify(source)})` });
  if (!loaded.ok) return failure({ ...loaded.problem, message: `the scene the log recorded cannot be loaded: ${loaded.problem.message}` });
  return success({ ...loaded.value, hash: definitionHash(loaded.value.code) });
}
