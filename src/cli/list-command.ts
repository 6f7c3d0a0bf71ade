import { EXIT, type CliIo } from './cli-io.js';
import { describeSceneOptions } from './scene-options.js';
import { loadScene, sceneNames, type LoadedScene } from './scene-loader.js';

/**
 * `troupe list`: each scene's name, description and default ticks, with its own flags indented
 * under it. A scene that fails to load is reported on stderr (and the exit code says so), but
 * the others are still listed.
 */
export async function listCommand(args: readonly string[], io: CliIo): Promise<number> {
  if (args.length > 0) {
    io.err.write(`troupe: list takes no arguments (got ${args.join(' ')})\n`);
    return EXIT.usage;
  }
  const names = await sceneNames(io.scenesDir);
  if (!names.ok) {
    io.err.write(`troupe: ${names.problem.message}\n`);
    return EXIT.usage;
  }
  const scenes: LoadedScene[] = [];
  let broken = 0;
  for (const name of names.value) {
    const loaded = await loadScene(io.scenesDir, name);
    if (loaded.ok) scenes.push(loaded.value);
    else {
      broken++;
      io.err.write(`troupe: ${loaded.problem.message}\n`);
    }
  }
  const width = Math.max(0, ...scenes.map((scene) => scene.name.length));
  for (const { name, definition } of scenes) {
    const ticks = `${definition.ticks} tick${definition.ticks === 1 ? '' : 's'}`;
    io.out.write(`${name.padEnd(width)}  ${definition.description} (${ticks})\n`);
    for (const line of describeSceneOptions(definition.options ?? {})) io.out.write(`${' '.repeat(width)}    ${line}\n`);
  }
  if (scenes.length === 0 && broken === 0) io.err.write('troupe: no scenes found (a scene is a folder with an index.ts exporting `scene`)\n');
  return broken > 0 ? EXIT.failed : EXIT.ok;
}
