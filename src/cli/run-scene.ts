import { randomInt } from 'node:crypto';
import type { Bus } from '../bus/bus.js';
import type { Scene, SceneModel, SceneResult } from '../scene/types.js';
import { ConfigError, LogError, TroupeError } from '../errors.js';
import { createCliLogger } from './cli-logger.js';
import { EXIT, exitCodeOf, type CliIo } from './cli-io.js';
import { errorText } from './error-text.js';
import type { EventHistory } from '../inspect/event-history.js';
import { openInspectorSession, runHistory, type InspectorSession } from './inspect-session.js';
import type { RunFlags } from './run-flags.js';
import { openRunLog, type RunLog } from './run-log.js';
import { sceneRecipe } from './scene-recipe.js';
import { openResume, type OpenedResume } from '../record/resume-scene.js';
import { openMcpServers, type McpServers } from './mcp-servers.js';
import { createRunOutput } from './run-output.js';
import type { LoadedScene } from './scene-loader.js';
import { wantsColour } from './style.js';
import { answerApprovals } from './approval-policy.js';
import { watchFailures } from './failure-watch.js';
import { stopOnSignals, type SignalWatch } from './stop-on-signals.js';
import { terminalSafe } from './terminal-text.js';
import { defaultSummary } from './summary.js';
import type { RedisBridge } from '../redis/bridge.js';
import { openSceneBridge } from './redis-flag.js';
import { unusedModel } from './unused-model.js';
import { modelProblem, sceneModel } from './scene-model.js';
import { runOnWorkers } from './run-workers.js';

/** A run that continues a log (`troupe resume`): the log, and the hash of the scene's code now. */
export type ResumeFrom = { log: string; hash: string };

/**
 * Runs a loaded scene as the flags say: builds it on a bus the CLI made (so every event, from the
 * first agent spawned on, is shown and logged), runs it for the ticks asked, stops it on Ctrl-C,
 * and prints the summary. With `resume`, the scene is built again from the log and continues it
 * (the flags then come from the log's recipe). Resolves with the exit code; never throws for a
 * scene's own failure.
 */
export async function runScene(loaded: LoadedScene, flags: RunFlags, io: CliIo, resume?: ResumeFrom): Promise<number> {
  if (flags.workers !== undefined && resume === undefined) return runOnWorkers(loaded, flags, io);
  const { definition, name, folder, file } = loaded;
  const logger = createCliLogger(io.err, io.env, wantsColour(io.err, io.env));
  if (!logger.ok) return fail(io, logger.problem, EXIT.usage);
  const seed = flags.seed ?? randomInt(0, 2 ** 31 - 1);
  const ticks = flags.ticks ?? definition.ticks;
  const output = createRunOutput(flags, ticks, io);

  let runLog: RunLog | undefined;
  if (flags.log !== undefined && resume === undefined) {
    try {
      runLog = openRunLog(flags.log, sceneRecipe(loaded, flags, seed, ticks));
    } catch (error) {
      output.finish();
      return fail(io, `cannot open --log ${flags.log}: ${(error as Error).message}`, EXIT.failed);
    }
  }
  let bridge: RedisBridge | undefined;
  let signals: SignalWatch | undefined;
  let session: InspectorSession | undefined;
  let resumed: OpenedResume | undefined;
  let mcp: McpServers | undefined;
  const finish = async (code: number): Promise<number> => {
    signals?.dispose();
    output.finish();
    // The scene is over: its MCP servers go, whatever the way out (done, failed, Ctrl-C).
    await mcp?.close();
    const problem = await runLog?.close();
    // A resume's log closes when its run ends; this closes it when the run never started.
    await resumed?.close();
    // What waits for Redis goes out before the page keeps serving.
    const unsent = await bridge?.close();
    if (session !== undefined) {
      // --inspect keeps the page up once the scene is over, until Ctrl-C; Ctrl-C during the run quits.
      if (signals?.signal === undefined) await session.serveUntilInterrupted(code === EXIT.ok ? 'the scene has ended' : 'the scene failed');
      await session.close();
    }
    if (problem !== undefined) return fail(io, `--log ${flags.log}: ${problem}`, EXIT.failed);
    if (bridge?.failure !== undefined) return EXIT.failed;
    if (unsent !== undefined && unsent > 0) return fail(io, `--redis: ${unsent} events could not be written to Redis stream ${bridge!.stream}`, EXIT.failed);
    return code;
  };
  if (flags.redis !== undefined) {
    // Before the scene is built, so that the stream has its every event.
    const opened = await openSceneBridge(flags.redis, name, flags.redisStream, (line) => output.note(line));
    if (!opened.ok) {
      await finish(EXIT.failed);
      return fail(io, opened.problem, EXIT.failed);
    }
    bridge = opened.value;
    output.note(`troupe: events go to Redis stream ${terminalSafe(bridge.stream)}; follow them with troupe inspect --redis URL --scene ${terminalSafe(name)}${flags.redisStream === undefined ? '' : ` --redis-stream ${terminalSafe(bridge.stream)}`}`);
  }

  // The scene makes its own bus (a stepped one runs on simulated time, so the same seed gives the
  // same events) and hands it over before any event is published.
  let sceneBus: Bus | undefined;
  let history: EventHistory | undefined;
  const observe = (bus: Bus): void => {
    if (sceneBus === undefined) bridge?.attach(bus);
    sceneBus ??= bus;
    if (flags.inspect) history ??= runHistory(bus);
    output.attach(bus);
    runLog?.watch(bus);
  };
  let model: SceneModel | undefined;
  if (flags.model !== undefined) {
    try {
      model = await sceneModel({ model: flags.model, protocol: flags.protocol, record: flags.record }, io);
    } catch (error) {
      await finish(EXIT.usage);
      return fail(io, modelProblem(flags.model, error), EXIT.usage);
    }
  }
  if (flags.mcp.length > 0) {
    try {
      mcp = await openMcpServers(flags.mcp, io.env, logger.value, io.loadMcp);
    } catch (error) {
      await finish(EXIT.usage);
      return fail(io, (error as Error).message, error instanceof ConfigError ? EXIT.usage : EXIT.failed);
    }
  }
  const tools = mcp?.tools;
  let scene: Scene;
  // Answers approvals as --approve says; on a resume, only once the log is used up (before, the log holds the answers).
  let stopAnswering: (() => void) | undefined;
  const answer = (target: Scene, bus: Bus): void => {
    if (flags.approve !== 'ask') stopAnswering = answerApprovals(target, bus, flags.approve);
  };
  if (resume !== undefined) {
    try {
      resumed = await openResume(resume.log, {
        definition,
        definitionHash: resume.hash,
        observe,
        logger: logger.value,
        ...(model !== undefined && { model }),
        ...(tools !== undefined && { tools }),
        onLive: (target) => answer(target, target.bus),
      });
    } catch (error) {
      output.finish();
      io.err.write(`troupe: ${error instanceof TroupeError || error instanceof LogError ? error.message : `scene "${name}" failed while being built:\n${errorText(error, folder)}`}\n`);
      return finish(EXIT.failed);
    }
    scene = resumed.scene;
    const from = resumed.checkpoint === undefined ? 'its start (no checkpoint yet)' : `tick ${resumed.fromTick} (checkpoint ${resumed.checkpoint})`;
    for (const skipped of resumed.skippedCheckpoints) output.note(`troupe: checkpoint ${terminalSafe(skipped.file)} skipped: ${terminalSafe(skipped.reason)}`);
    output.note(`troupe: resuming ${terminalSafe(resume.log)} from ${from}: ${resumed.replayed} logged events to replay`);
  } else {
    try {
      scene = await definition.create({
        observe,
        seed,
        logger: logger.value,
        log: runLog?.log,
        ...(model !== undefined && { model }),
        ...(tools !== undefined && { tools }),
        options: flags.options,
      });
    } catch (error) {
      output.finish();
      io.err.write(`troupe: scene "${name}" failed while being built:\n${errorText(error, folder)}\n`);
      return finish(EXIT.failed);
    }
  }
  if (scene === null || typeof scene !== 'object' || typeof scene.run !== 'function' || typeof scene.stop !== 'function') {
    io.err.write(`troupe: ${file}: create() must return a Scene (made with createScene), got ${scene === null ? 'null' : typeof scene}\n`);
    return finish(EXIT.failed);
  }
  if (sceneBus === undefined) {
    logger.value.warn({ scene: name }, 'the scene did not pass context.observe to createScene: events published while it was built are not shown');
    sceneBus = scene.bus;
    bridge?.attach(sceneBus);
    output.attach(sceneBus);
  }
  if (model !== undefined) {
    const unused = unusedModel(scene, flags.model!);
    if (unused !== undefined) {
      output.finish();
      io.err.write(`troupe: ${unused}\n`);
      return finish(EXIT.usage);
    }
  }
  runLog?.ensureRecording(sceneBus);
  const failures = watchFailures(sceneBus);
  if (resumed === undefined) answer(scene, sceneBus);
  signals = stopOnSignals(scene, io, (line) => output.note(line));
  if (flags.inspect) {
    const opened = await openInspectorSession({ scene, history: history ?? runHistory(sceneBus) }, { port: flags.port, host: flags.host, paused: flags.paused }, io, (line) => output.note(line));
    if (!opened.ok) {
      output.note(`troupe: ${opened.problem}`);
      return finish(EXIT.failed);
    }
    session = opened.value;
  }

  let result: SceneResult;
  try {
    // A signal may have stopped the scene while the inspector started.
    if (resumed !== undefined) result = (await resumed.run({ ...(session !== undefined && { beforeTick: session.beforeTick }) })).result;
    else result = scene.stopped ? await scene.stop() : await scene.run({ ticks, beforeTick: session?.beforeTick });
  } catch (error) {
    // Stopped first, so that its last events are shown and logged before the error.
    await scene.stop('error').catch(() => undefined);
    output.note(`troupe: scene "${name}" failed:\n${errorText(error, folder)}`);
    return finish(EXIT.failed);
  } finally {
    signals.dispose();
    failures.stop();
    stopAnswering?.();
  }
  output.finish();

  let summary: string;
  try {
    const own = definition.summarize?.(scene, result);
    // A scene's own summary may leave the seed out; a random one is needed to repeat the run.
    summary = own === undefined ? defaultSummary(name, result, seed) : flags.seed === undefined ? `${own} (seed ${seed})` : own;
  } catch (error) {
    io.err.write(`troupe: scene "${name}" failed in summarize():\n${errorText(error, folder)}\n`);
    return finish(EXIT.failed);
  }
  const logPath = runLog?.log.path ?? resume?.log;
  if (logPath !== undefined && !flags.json && !flags.quiet) io.out.write(`log: ${terminalSafe(logPath)}\n`);
  // Failed turns show in every mode: a scene's own summary may not mention them.
  const failed = failures.line(result);
  // A scene's summary may quote what its agents wrote.
  (flags.json ? io.err : io.out).write(`${terminalSafe(failed === undefined ? summary : `${summary}\n${failed}`)}\n`);
  if (signals.signal !== undefined) return finish(exitCodeOf(signals.signal));
  return finish(failures.allFailed(result) ? EXIT.failed : EXIT.ok);
}

function fail(io: CliIo, message: string, code: number): number {
  io.err.write(`troupe: ${message}\n`);
  return code;
}
