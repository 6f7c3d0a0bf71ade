import { parseArgs } from 'node:util';
import type { SceneRecipe } from '../bus/event-data.js';
import { ConfigError } from '../errors.js';
import { EXIT, exitCodeOf, type CliIo, type StopSignal } from './cli-io.js';
import { loadWorkers } from './redis-flag.js';
import { redisFlag } from './run-flags.js';
import { loadRecipeScene } from './scene-recipe.js';
import { answerApprovals } from './approval-policy.js';
import { modelProblem, sceneModel } from './scene-model.js';
import type { SceneModel } from '../scene/types.js';
import { terminalSafe } from './terminal-text.js';

export const WORKER_USAGE = `Usage: troupe worker --redis URL [--scene NAME] [--id ID] [--once]

  Joins runs of scenes across workers (troupe run <scene> --redis URL --workers N) and runs the
  turns of the partitions it is given. It builds each run's scene from the run's recipe, and
  refuses a run whose scene code differs from its own.

  --redis URL   the Redis the runs are on (redis://[user:password@]host:6379)
  --scene NAME  join the run of this name (troupe run's --redis-name, default the scene's);
                without it, the first run in progress
  --id ID       this worker's id (default host:pid:random)
  --once        leave after one run (default: wait for the next)
  -h, --help    this text

Ctrl-C (or SIGTERM) leaves after the tick in progress; its partitions move to the other workers.
See docs/distributed-workers.md.`;

/** `troupe worker`: joins runs until stopped (or after one, with `--once`). */
export async function workerCommand(args: readonly string[], io: CliIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: { redis: { type: 'string' }, scene: { type: 'string' }, id: { type: 'string' }, once: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (error) {
    io.err.write(`troupe worker: ${(error as Error).message.split('\n')[0]}\n`);
    return EXIT.usage;
  }
  if (values.help === true) {
    io.out.write(`${WORKER_USAGE}\n`);
    return EXIT.ok;
  }
  const redis = redisFlag(values.redis);
  if (!redis.ok) return usage(io, redis.problem);
  if (redis.value === undefined) return usage(io, 'worker needs --redis URL, e.g. troupe worker --redis redis://127.0.0.1:6379');
  const workers = await loadWorkers('troupe worker');
  if (!workers.ok) {
    io.err.write(`troupe worker: ${workers.problem}\n`);
    return EXIT.failed;
  }
  const controller = new AbortController();
  let signal: StopSignal | undefined;
  const dispose = io.interrupts((received = 'SIGINT') => {
    if (signal !== undefined) return io.exit(exitCodeOf(received));
    signal = received;
    io.err.write('troupe worker: leaving after the tick in progress (again to quit at once)\n');
    controller.abort();
  });
  const load = async (recipe: SceneRecipe) => {
    const loaded = await loadRecipeScene(recipe);
    if (!loaded.ok) throw new ConfigError(loaded.problem.message);
    // The run's --model, with this machine's keys and base URLs.
    let model: SceneModel | undefined;
    if (recipe.model !== undefined) {
      try {
        model = await sceneModel({ model: recipe.model.spec, protocol: recipe.model.protocol }, io);
      } catch (error) {
        throw new ConfigError(`the run's ${modelProblem(recipe.model.spec, error)}`);
      }
    }
    return { definition: loaded.value.definition, hash: loaded.value.hash, ...(model !== undefined && { model }) };
  };
  try {
    do {
      const result = await workers.value.runWorker({
        url: redis.value,
        load,
        signal: controller.signal,
        ...(values.scene !== undefined && { name: values.scene }),
        ...(values.id !== undefined && { id: values.id }),
        onNotice: (line) => void io.err.write(`troupe worker: ${terminalSafe(line)}\n`),
        // The run's --approve (a run on workers never asks: nobody here could answer).
        prepare: (scene, recipe) => void (recipe.approve !== 'ask' && answerApprovals(scene, scene.bus, recipe.approve ?? 'none')),
      });
      if (result.run !== '') {
        io.err.write(`troupe worker: run ${result.run} of ${terminalSafe(result.name)} ended: ${result.committed} partition ticks committed, ${result.turns} turns${result.claimed > 0 ? `, ${result.claimed} taken over` : ''}, ${result.roundTrips} round trips to Redis\n`);
      }
    } while (values.once !== true && !controller.signal.aborted);
  } catch (error) {
    io.err.write(`troupe worker: ${terminalSafe((error as Error).message)}\n`);
    return EXIT.failed;
  } finally {
    dispose();
  }
  return signal === undefined ? EXIT.ok : exitCodeOf(signal);
}

function usage(io: CliIo, problem: string): number {
  io.err.write(`troupe worker: ${problem}\n`);
  return EXIT.usage;
}
