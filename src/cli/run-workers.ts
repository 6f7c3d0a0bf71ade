import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { TroupeError } from '../errors.js';
import type { Scene, SceneModel, SceneResult } from '../scene/types.js';
import { createCliLogger } from './cli-logger.js';
import { EXIT, exitCodeOf, type CliIo, type StopSignal } from './cli-io.js';
import { errorText } from './error-text.js';
import { followSceneStream, loadWorkers } from './redis-flag.js';
import { openInspectorSession, runHistory, type InspectorSession } from './inspect-session.js';
import type { RedisSubscription } from '../redis/subscribe.js';
import { success, type Outcome } from '../outcome.js';
import type { RunFlags } from './run-flags.js';
import { createRunOutput } from './run-output.js';
import { sceneRecipe } from './scene-recipe.js';
import { modelProblem, sceneModel } from './scene-model.js';
import { unusedModel } from './unused-model.js';
import type { LoadedScene } from './scene-loader.js';
import { wantsColour } from './style.js';
import { defaultSummary } from './summary.js';
import { terminalSafe } from './terminal-text.js';

// Under tsx this module is .ts and the CLI runs from source; once built, the compiled .js.
const OWN_EXTENSION = import.meta.url.endsWith('.ts') ? 'ts' : 'js';

/**
 * `troupe run <scene> --redis URL --workers N`: this process coordinates (builds the scene for
 * its clock, world replica and summary, hands out each tick's turns, waits for every partition),
 * and N `troupe worker` processes run the agents: started here, or, with `--wait-workers`,
 * started anywhere and waited for. Resolves with the exit code.
 */
export async function runOnWorkers(loaded: LoadedScene, flags: RunFlags, io: CliIo): Promise<number> {
  const { definition, name, folder } = loaded;
  const logger = createCliLogger(io.err, io.env, wantsColour(io.err, io.env));
  if (!logger.ok) return fail(io, logger.problem, EXIT.usage);
  const workers = await loadWorkers('--workers');
  if (!workers.ok) return fail(io, workers.problem, EXIT.failed);
  let model: SceneModel | undefined;
  if (flags.model !== undefined) {
    try {
      model = await sceneModel({ model: flags.model, protocol: flags.protocol }, io);
    } catch (error) {
      return fail(io, modelProblem(flags.model, error), EXIT.usage);
    }
  }
  const seed = flags.seed ?? randomInt(0, 2 ** 31 - 1);
  const ticks = flags.ticks ?? definition.ticks;
  const output = createRunOutput(flags, ticks, io);
  let coordinator;
  try {
    coordinator = await workers.value.openCoordinator({
      url: flags.redis!,
      recipe: sceneRecipe(loaded, flags, seed, ticks),
      name: flags.redisName ?? name,
      ...(flags.redisStream !== undefined && { stream: flags.redisStream }),
      ...(flags.partitions !== undefined && { partitions: flags.partitions }),
      ...(flags.claimIdleMs !== undefined && { claimIdleMs: flags.claimIdleMs }),
      workers: flags.workers!,
      onNotice: (line) => output.note(`troupe: ${line}`),
    });
  } catch (error) {
    output.finish();
    return fail(io, `--redis: ${(error as Error).message}`, EXIT.failed);
  }
  const runName = coordinator.name;
  output.note(`troupe: run ${coordinator.run} of ${terminalSafe(runName)} across ${flags.workers} worker${flags.workers === 1 ? '' : 's'}, ${coordinator.partitions} partitions; events go to ${terminalSafe(coordinator.stream)}`);
  let page: RunPage | undefined;
  if (flags.inspect) {
    const opened = await openRunPage(flags, coordinator.stream, io, (line) => output.note(line));
    if (!opened.ok) {
      output.finish();
      await coordinator.close();
      return fail(io, `--inspect: ${opened.problem}`, EXIT.failed);
    }
    page = opened.value;
  }
  const children = flags.waitWorkers === true ? [] : startWorkers(flags.workers!, flags.redis!, runName, (line) => output.note(line));
  const controller = new AbortController();
  // Workers started here that all stop (refused, crashed) leave nothing to run the turns: the run stops too.
  let workersGone = false;
  let running = true;
  let left = children.length;
  for (const child of children) {
    child.once('exit', () => {
      if (--left > 0 || controller.signal.aborted || !running) return;
      workersGone = true;
      output.note('troupe: every worker started for the run has stopped; stopping the run');
      controller.abort();
    });
  }
  let signal: StopSignal | undefined;
  const dispose = io.interrupts((received = 'SIGINT') => {
    if (signal !== undefined) return io.exit(exitCodeOf(received));
    signal = received;
    output.note('troupe: stopping after the tick in progress (again to quit at once)');
    controller.abort();
  });
  const finish = async (code: number): Promise<number> => {
    dispose();
    output.finish();
    await coordinator.close();
    // The run is over: started workers see it and leave; any still there after 10 s are stopped.
    await Promise.all(children.map((child) => exited(child, 10_000)));
    if (page !== undefined) {
      // As for one process: the page stays up once the run is over, until Ctrl-C; Ctrl-C during the run quits.
      if (signal === undefined) await page.session.serveUntilInterrupted(code === EXIT.ok ? 'the run has ended' : 'the run failed');
      await page.session.close();
      await page.events.close();
    }
    return code;
  };
  let scene: Scene;
  try {
    scene = await workers.value.buildWithHooks(coordinator.hooks, () =>
      definition.create({ observe: (bus) => output.attach(bus), seed, logger: logger.value, options: flags.options, ...(model !== undefined && { model }) }),
    );
  } catch (error) {
    output.finish();
    io.err.write(`troupe: scene "${name}" failed while being built:\n${errorText(error, folder)}\n`);
    return finish(EXIT.failed);
  }
  const unused = flags.model === undefined ? undefined : unusedModel(scene, flags.model);
  if (unused !== undefined) {
    output.finish();
    io.err.write(`troupe: ${unused}\n`);
    return finish(EXIT.usage);
  }
  let result: SceneResult;
  try {
    result = await coordinator.drive(scene, { ticks, signal: controller.signal });
    running = false;
  } catch (error) {
    running = false;
    await scene.stop('error').catch(() => undefined);
    // Redis failed, not the scene (it came back without the run, say): one line, as at startup.
    const redis = error instanceof TroupeError && error.code.startsWith('redis_');
    output.note(redis ? `troupe: ${terminalSafe(error.message)}` : `troupe: scene "${name}" failed:\n${errorText(error, folder)}`);
    return finish(EXIT.failed);
  }
  output.note(`troupe: run ${coordinator.run} ended: ${coordinator.roundTrips} round trips to Redis from the coordinator`);
  output.finish();
  const own = definition.summarize?.(scene, result);
  const summary = own === undefined ? defaultSummary(name, result, seed) : flags.seed === undefined ? `${own} (seed ${seed})` : own;
  (flags.json ? io.err : io.out).write(`${terminalSafe(summary)}\n`);
  if (signal !== undefined) return finish(exitCodeOf(signal));
  return finish(workersGone || (result.turns > 0 && result.failures === result.turns) ? EXIT.failed : EXIT.ok);
}

type RunPage = { events: RedisSubscription; session: InspectorSession };

/** `--inspect` on workers: a read-only page on the run's events stream, every process's events in stream order. */
async function openRunPage(flags: RunFlags, stream: string, io: CliIo, note: (line: string) => void): Promise<Outcome<RunPage, string>> {
  const followed = await followSceneStream(flags.redis!, undefined, stream, note);
  if (!followed.ok) return followed;
  const events = followed.value;
  const session = await openInspectorSession({ bus: events.bus, history: runHistory(events.bus) }, { port: flags.port, host: flags.host }, io, note);
  if (session.ok) return success({ events, session: session.value });
  await events.close();
  return session;
}

/** Starts `count` local `troupe worker` processes for run `name`; their notes come out prefixed. */
function startWorkers(count: number, url: string, name: string, note: (line: string) => void): ChildProcess[] {
  const entry = fileURLToPath(new URL(`./main.${OWN_EXTENSION}`, import.meta.url));
  const loader = OWN_EXTENSION === 'ts' ? ['--import', 'tsx'] : [];
  return Array.from({ length: count }, (_, index) => {
    const child = spawn(process.execPath, [...loader, entry, 'worker', '--redis', url, '--scene', name, '--once'], { stdio: ['ignore', 'ignore', 'pipe'] });
    createInterface({ input: child.stderr! }).on('line', (line) => note(`worker ${index + 1}: ${line}`));
    return child;
  });
}

async function exited(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  await once(child, 'exit');
  clearTimeout(timer);
}

function fail(io: CliIo, message: string, code: number): number {
  io.err.write(`troupe: ${message}\n`);
  return code;
}
