import { EXIT, type CliIo } from './cli-io.js';
import { parseRunFlags, sceneNameOf } from './run-flags.js';
import { runScene } from './run-scene.js';
import { isScenePath, loadSceneFile } from './scene-file.js';
import { loadScene } from './scene-loader.js';
import { runUsage, USAGE } from './usage.js';

/**
 * `troupe run <scene> [flags]`: finds and loads the scene first — a scene of the scenes folder by
 * name, or a scene file by path (`./duel.ts`) — (its options are flags too),
 * then parses every flag strictly, then runs. Usage problems exit 2, a broken scene 1.
 */
export async function runCommand(args: readonly string[], io: CliIo): Promise<number> {
  const name = sceneNameOf(args);
  if (name === undefined) {
    if (args.includes('--help') || args.includes('-h')) {
      io.out.write(`${USAGE}\n`);
      return EXIT.ok;
    }
    io.err.write('troupe: run needs a scene name (see: troupe list) or a scene file (./my-scene.ts)\n');
    return EXIT.usage;
  }
  const loaded = isScenePath(name) ? await loadSceneFile(name) : await loadScene(io.scenesDir, name);
  if (!loaded.ok) {
    io.err.write(`troupe: ${loaded.problem.message}\n`);
    return loaded.problem.kind === 'usage' ? EXIT.usage : EXIT.failed;
  }
  const { definition } = loaded.value;
  const flags = parseRunFlags(args, definition.options);
  if (!flags.ok) {
    io.err.write(`troupe run ${name}: ${flags.problem}\n`);
    return EXIT.usage;
  }
  if (flags.value.help) {
    io.out.write(`${runUsage(name, definition)}\n`);
    return EXIT.ok;
  }
  return runScene(loaded.value, flags.value, io);
}
