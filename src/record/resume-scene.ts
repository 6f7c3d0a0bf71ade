import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import type { SceneRecipe } from '../bus/event-data.js';
import type { Envelope } from '../bus/events.js';
import { sequentialIds } from '../bus/ids.js';
import { LogError, TroupeError } from '../errors.js';
import { resolveModel, type ResolveModelOptions } from '../llm/resolve-model.js';
import { replayTargetOf } from '../scene/create-scene.js';
import type { SceneDefinition } from '../scene/define-scene.js';
import type { Scene, SceneModel, SceneResult } from '../scene/types.js';
import type { Tool } from '../tools/types.js';
import { latestCheckpoint } from './checkpoints.js';
import { readLogStart, readLogTail, type LogPosition, type LogTail } from './log-reader.js';
import type { LogHeader } from './log-format.js';
import { replayable } from './log-segments.js';
import { recordedProvider } from './recorded-provider.js';
import { createRedactor } from './redact.js';
import { ReplayDriver, type Divergence } from './replay-driver.js';
import { createSessionLog, type SessionLogOptions } from './session-log.js';

/** How to build the scene a log recorded, and what to watch it with: what `resumeScene` and `replayScene` share. */
export type RebuildOptions = {
  /** The scene the log recorded (`troupe resume` and `troupe replay` load it from the log's recipe). */
  definition: SceneDefinition;
  /**
   * The hash of the definition's source now (see `definitionHash`): the log is refused when it
   * differs from the one it recorded. Leave it out to skip the check.
   */
  definitionHash?: string;
  /** The model the scene's members run on (default: the log's `--model`, made again from the environment). */
  model?: SceneModel;
  /** How a model spec is made into a provider (environment, adapter loading). */
  resolve?: ResolveModelOptions;
  /** Tools every member gets, as `troupe run --mcp` gave them (`SceneContext.tools`). */
  tools?: readonly Tool[];
  /**
   * Subscribes to the scene's bus before any event (as `createScene`'s `observe`). It sees the
   * events replayed from the log too: decide approvals only from `onLive` on.
   */
  observe?: (bus: Bus) => void;
  logger?: Logger;
};

/** The options of `resumeScene`. */
export type ResumeSceneOptions = RebuildOptions & {
  /**
   * Called once the log is used up and the scene goes on live, just before the approval requests
   * still waiting at the crash are published again (bound to the same calls and arguments).
   */
  onLive?: (scene: Scene) => void;
  /** Options of the log as it goes on being written (fsync, redaction, checkpoints). */
  log?: Omit<SessionLogOptions, 'mode' | 'accept' | 'lines' | 'recipe'>;
};

/** How a resume went: the scene's result, and where it took up. */
export type ResumeResult = {
  result: SceneResult;
  /** The tick the resume started from (its checkpoint's, 0 without one). */
  fromTick: number;
  /** The checkpoint it started from, when there was one. */
  checkpoint?: number;
  /** Events of the log it replayed before going on live. */
  replayed: number;
  /** Checkpoints it passed over because they were damaged, each with why. */
  skippedCheckpoints: { file: string; reason: string }[];
};

/** A scene rebuilt from its log and ready to go on: `run` replays the log, then continues live. */
export type OpenedResume = Omit<ResumeResult, 'result'> & {
  readonly scene: Scene;
  readonly recipe: SceneRecipe;
  /** Replays what the log holds after the checkpoint, then runs the ticks left; `beforeTick` as for `scene.run`. */
  run(options?: { beforeTick?: (tick: number) => Promise<void> | undefined }): Promise<ResumeResult>;
  /** Closes the log without running (when the host gives up before `run`). */
  close(): Promise<void>;
};

/**
 * Continues the scene a session log recorded, to the end it would have reached, appending to the
 * same log. The log says how to build it again (scene, options, seed, ticks, model); the newest
 * good checkpoint gives its state, and the events after it are replayed in lockstep: a model's
 * replies come from the log and a call whose end the log holds never runs again; a call that was
 * running when the process died runs again only when its tool is read-only or idempotent (else
 * the model hears its outcome is unknown); approvals that were waiting are requested again.
 * Throws `TroupeError` (`resume_refused`) when the log cannot be trusted or does not fit, and
 * (`replay_diverged`) when the scene does not replay as the log recorded.
 *
 * @example
 * const { result } = await resumeScene('runs/tavern.jsonl', { definition: tavernScene });
 */
export async function resumeScene(logPath: string, options: ResumeSceneOptions): Promise<ResumeResult> {
  const opened = await openResume(logPath, options);
  return opened.run();
}

/**
 * `resumeScene` in two steps, for a host that wires the scene up (signals, an inspector) before it
 * goes on: builds the scene from the log and its newest checkpoint, and returns it ready to `run`.
 */
export async function openResume(logPath: string, options: ResumeSceneOptions): Promise<OpenedResume> {
  const path = resolve(logPath);
  const refuse = refuser('resume', path);
  const { opened, recipe, header, start, text } = readRecipeAt(path, refuse);
  checkHash(recipe, options.definitionHash, refuse);
  const { checkpoint, rejected } = latestCheckpoint(path);
  const tail = untamperedTail(path, header, checkpoint?.position ?? start, refuse, '; a resume needs the log as troupe wrote it');
  const plan = replayable(tail.events, tail.lines);
  if (plan.finished !== undefined) return refuse(`the run finished (reason ${plan.finished.reason}, line ${plan.finished.line}): there is nothing to resume`);
  const lastLine = tail.lines.at(-1) ?? checkpoint?.position.line ?? start.line;
  const redactor = createRedactor({ secrets: options.log?.redact ?? [] });
  const driver = new ReplayDriver('resume', plan.events, plan.lines, redactor, sequentialIds(`${recipe.scene}-r${randomUUID().slice(0, 8)}`));
  let goneLive = false;
  const log = createSessionLog(path, {
    ...(recipe.checkpoints !== undefined && { checkpoints: recipe.checkpoints }),
    ...options.log,
    mode: 'append',
    lines: lastLine + (tail.quarantined.length > 0 ? 1 : 0),
    accept: (event) => {
      if (!driver.accept(event)) return false;
      if (!goneLive) {
        goneLive = true;
        // The resume's own line, before the first event it adds.
        log.record(openedEvent(log.run, opened.data.run, recipe, checkpoint?.tick ?? 0, checkpoint?.number));
      }
      return true;
    },
  });
  // A checkpoint holds the scene at a line of the log: none until the log is used up, when the
  // scene is where the end of the file says.
  const checkpointLive = log.checkpoint;
  log.checkpoint = (tick, snapshot) => {
    if (!driver.replaying && driver.divergence === undefined) checkpointLive?.(tick, snapshot);
  };
  log.replay = {
    ids: driver.ids,
    tap: driver.tap,
    provider: (provider) => recordedProvider(provider, driver),
    journal: (call, attempt) => driver.attempt(call, attempt),
  };
  let scene: Scene;
  try {
    const model = options.model ?? (await recipeModel(recipe, options.resolve));
    // Without a checkpoint the run starts over, and the scene's first events (its agents spawning)
    // are the log's first: they are followed from the start.
    if (checkpoint === undefined) driver.follow();
    scene = await options.definition.create({
      seed: recipe.seed,
      options: recipe.options as Record<string, string | number | boolean>,
      log,
      ...(options.observe !== undefined && { observe: options.observe }),
      ...(options.logger !== undefined && { logger: options.logger }),
      ...(model !== undefined && { model }),
      ...(options.tools !== undefined && { tools: options.tools }),
    });
    checkSceneName(scene.name, recordedScene(text, tail.events), refuse);
    if (scene.clockMode !== 'stepped') refuse(`scene "${recipe.scene}" runs on a ${scene.clockMode} clock; a resume replays stepped scenes only`);
    if (checkpoint !== undefined) scene.restore(checkpoint.snapshot as never);
  } catch (error) {
    await log.close();
    throw error;
  }
  const where = {
    fromTick: checkpoint?.tick ?? 0,
    ...(checkpoint !== undefined && { checkpoint: checkpoint.number }),
    replayed: plan.events.length,
    skippedCheckpoints: rejected,
  };
  return {
    ...where,
    scene,
    recipe,
    close: () => log.close(),
    async run(runOptions = {}) {
      try {
        const target = replayTargetOf(scene);
        driver.begin(target);
        const afterReplay = driver.done.then(async () => {
          if (driver.divergence !== undefined) return void (await scene.stop('error'));
          if (scene.stopped) return;
          options.onLive?.(scene);
          target.requestApprovalsAgain();
        });
        const left = recipe.ticks === undefined ? Number.POSITIVE_INFINITY : recipe.ticks - scene.tick;
        const result = left > 0 ? await scene.run({ ticks: left, ...(runOptions.beforeTick !== undefined && { beforeTick: runOptions.beforeTick }) }) : await scene.stop('ticks');
        await Promise.race([afterReplay, Promise.resolve()]);
        if (driver.divergence !== undefined) throw new TroupeError('replay_diverged', `cannot resume ${path}: ${describeDivergence(driver.divergence)}`);
        return { ...where, result };
      } finally {
        await log.close();
      }
    },
  };
}

/**
 * The recipe a log opens with: how `troupe run` built its scene. Throws `TroupeError`
 * (`resume_refused`) when the log has none.
 */
export function readRecipe(logPath: string, verb: 'resume' | 'replay' = 'resume'): SceneRecipe {
  const path = resolve(logPath);
  return readRecipeAt(path, refuser(verb, path)).recipe;
}

/** One line on where a run left its log: event number and line, types, the field, and a hint. */
export function describeDivergence(divergence: Divergence): string {
  const { index, line, expected, actual, field, hint } = divergence;
  const name = (event: Divergence['expected']) => (event === undefined ? 'nothing' : `${event.type}${event.agent === undefined ? '' : ` of ${event.agent}`}`);
  const where = line > 0 ? `event ${index} (line ${line})` : `event ${index}`;
  const detail = field === undefined ? '' : ` (they differ at ${field})`;
  return `the run left its log at ${where}: the log has ${name(expected)}, the run made ${name(actual)}${detail}; ${hint}`;
}

/** Throws `resume_refused` for `path`, saying why. */
export function refuser(verb: 'resume' | 'replay', path: string): (why: string) => never {
  return (why) => {
    throw new TroupeError('resume_refused', `cannot ${verb} ${path}: ${why}`);
  };
}

/**
 * The log from `from` on, refused when a line does not match its checksum (edited by hand):
 * neither a resume nor a replay may follow a log troupe did not write. `why` ends the message.
 */
export function untamperedTail(path: string, header: LogHeader, from: LogPosition, refuse: (why: string) => never, why = ''): LogTail {
  const tail = readLogTail(path, header, from);
  const first = tail.tampered[0];
  if (first !== undefined) refuse(`line ${first.lineNumber} does not match its checksum: the log was changed by hand (${first.reason})${why}`);
  return tail;
}

/** Refuses a definition whose code is not the code the log was written with. */
export function checkHash(recipe: SceneRecipe, now: string | undefined, refuse: (why: string) => never): void {
  if (now === undefined || now === recipe.definitionHash) return;
  refuse(`the code of scene "${recipe.scene}" changed since the log was written (definition hash ${recipe.definitionHash.slice(0, 12)}…, now ${now.slice(0, 12)}…)`);
}

/** Refuses a scene built from the definition given that is not the scene the log recorded. */
export function checkSceneName(built: string, recorded: string | undefined, refuse: (why: string) => never): void {
  if (recorded === undefined || recorded === built) return;
  refuse(`it records scene "${recorded}", and the definition given builds scene "${built}"`);
}

/**
 * The name of the scene a log's events belong to (their `scene`): from its first lines, or else
 * from the events read after its checkpoint. `undefined` when no event names a scene.
 */
export function recordedScene(start: string, tail: readonly Envelope[]): string | undefined {
  const lines = start.split('\n');
  // The last piece may be a line cut by the read's end: it is not parsed.
  for (const line of lines.slice(1, -1)) {
    try {
      const scene = (JSON.parse(line) as { scene?: unknown }).scene;
      if (typeof scene === 'string') return scene;
    } catch {
      // a damaged line names nothing
    }
  }
  return tail.find((event) => typeof event.scene === 'string')?.scene;
}

/** The log's header, where its events start, and its first event, the run's `log.opened` with the recipe. */
export function readRecipeAt(path: string, refuse: (why: string) => never) {
  const { header, start, text } = readLogStart(path);
  const opened = firstOpened(text);
  const recipe = opened?.data.recipe;
  if (opened === undefined || recipe === undefined) return refuse('it records no scene recipe (it was not written by troupe run or with createSessionLog({ recipe }), or its first lines are lost)');
  return { opened, recipe, header, start, text };
}

/** The log's first event when it is the run's `log.opened` (read from the start of the file only). */
export function firstOpened(start: string): Envelope<'log.opened'> | undefined {
  const line = start.split('\n')[1];
  if (line === undefined) return undefined;
  try {
    const event = JSON.parse(line) as Envelope;
    return event.type === 'log.opened' ? (event as Envelope<'log.opened'>) : undefined;
  } catch {
    return undefined;
  }
}

function openedEvent(run: string, resumes: string, recipe: SceneRecipe, fromTick: number, checkpoint: number | undefined): Envelope<'log.opened'> {
  return {
    id: `log-${run}`,
    type: 'log.opened',
    at: Date.now(),
    data: { run, kind: 'resume', recipe, resumes, fromTick, ...(checkpoint !== undefined && { checkpoint }) },
  } as Envelope<'log.opened'>;
}

/** The log's `--model`, made again from the environment (its keys are never in the log). */
export async function recipeModel(recipe: SceneRecipe, options: ResolveModelOptions | undefined): Promise<SceneModel | undefined> {
  if (recipe.model === undefined) return undefined;
  const { spec, protocol } = recipe.model;
  try {
    const provider = await resolveModel(spec, options);
    return protocol === undefined ? { provider } : { provider, protocol };
  } catch (error) {
    throw new LogError('log_format', `the log's model ${spec} cannot be made again: ${(error as Error).message}`, { cause: error });
  }
}
