import { resolve } from 'node:path';
import { sequentialIds } from '../bus/ids.js';
import { replayTargetOf } from '../scene/create-scene.js';
import type { SceneRecipe } from '../bus/event-data.js';
import type { ResolveModelOptions } from '../llm/resolve-model.js';
import { ProviderError } from '../llm/provider-error.js';
import type { Provider } from '../llm/types.js';
import type { SceneModel, SceneResult } from '../scene/types.js';

import { replayable } from './log-segments.js';
import { recordedProvider } from './recorded-provider.js';
import { createRedactor } from './redact.js';
import { ReplayDriver, type Divergence } from './replay-driver.js';
import { checkHash, checkSceneName, describeDivergence, readRecipeAt, recipeModel, recordedScene, refuser, untamperedTail, type RebuildOptions } from './resume-scene.js';
import type { SessionLog } from './session-log.js';

/** The options of `replayScene`. */
export type ReplaySceneOptions = RebuildOptions & {
  /** Secrets the log was written with (`SessionLogOptions.redact`): the run's events are compared as the log wrote them. */
  redact?: (string | RegExp)[];
};

/** How a replay went: whether the run made the events its log holds, and where it left them. */
export type ReplayReport = {
  /** True when every event the log holds was made again, in order for each agent, with the same data. */
  identical: boolean;
  /** The first event that differs, when one does. */
  divergence?: Divergence;
  /** One line for people: `replayed 412 events of … : identical`, or where and how it left the log. */
  message: string;
  /** Events of the log compared (those a replay makes: not the log's own lines, nor a stop's shutting down). */
  events: number;
  /** True when the log ends without `scene.stopped` (its writer died, and nothing resumed it): what it holds was compared. */
  unfinished: boolean;
  /** The scene's result (stopped where the log ends, when that is before its own end). */
  result: SceneResult;
};

/**
 * Runs a logged scene again from its start and compares each event it makes with the log, ids and
 * times aside: the models' replies come from the log (no provider is asked, no network), tools run
 * for real, and a call the log records as interrupted by a crash is interrupted again. Each agent's
 * events must come in the logged order; how different agents' events interleave may differ. Resolves
 * with a report (never throws for a divergence); throws `TroupeError` (`resume_refused`) for a log
 * it cannot read as a recorded scene. Use it to pin a recorded run as a regression test.
 *
 * @example
 * // test/golden/replay.test.ts: the log of `troupe run tavern --seed 7`, pinned (docs/durability.md)
 * import { scene as tavern } from '../../scenes/tavern/index.js';
 * const report = await replayScene('test/golden/tavern.jsonl', { definition: tavern });
 * expect(report.divergence, report.message).toBeUndefined();
 */
export async function replayScene(logPath: string, options: ReplaySceneOptions): Promise<ReplayReport> {
  const path = resolve(logPath);
  const refuse = refuser('replay', path);
  const { recipe, header, start, text } = readRecipeAt(path, refuse);
  checkHash(recipe, options.definitionHash, refuse);
  const read = untamperedTail(path, header, start, refuse);
  const plan = replayable(read.events, read.lines);
  const driver = new ReplayDriver('replay', plan.events, plan.lines, createRedactor({ secrets: options.redact ?? [] }), sequentialIds(`${recipe.scene}-replay`));
  const log = replayOnly(path, recipe.scene, {
    ids: driver.ids,
    tap: driver.tap,
    provider: (provider) => recordedProvider(provider, driver),
    // A call the crash cut is interrupted again, after what it did before the crash (from the log).
    journal: (call, attempt) => driver.interruption(call, attempt),
  });
  const model = options.model ?? (await offlineModel(recipe, options.resolve));
  driver.follow();
  const scene = await options.definition.create({
    seed: recipe.seed,
    options: recipe.options as Record<string, string | number | boolean>,
    log,
    ...(options.observe !== undefined && { observe: options.observe }),
    ...(options.logger !== undefined && { logger: options.logger }),
    ...(model !== undefined && { model }),
    ...(options.tools !== undefined && { tools: options.tools }),
  });
  checkSceneName(scene.name, recordedScene(text, read.events), refuse);
  driver.begin(replayTargetOf(scene));
  const last = plan.events.findLast((event) => !event.type.startsWith('log.'));
  const unfinished = last?.type !== 'scene.stopped';
  // Where the log ends (a divergence, or a writer that died), the scene is stopped: nothing after is compared.
  const stopped = driver.done.then(() => {
    if (driver.divergence !== undefined) return scene.stop('error');
    if (unfinished) return scene.stop();
    return undefined;
  });
  const result = await scene.run(recipe.ticks === undefined ? {} : { ticks: recipe.ticks });
  await Promise.race([stopped, Promise.resolve()]);
  const events = plan.events.filter((event) => !event.type.startsWith('log.')).length;
  const { divergence } = driver;
  const message =
    divergence !== undefined
      ? `${path}: ${describeDivergence(divergence)}`
      : `replayed ${events} events of ${path}: identical${unfinished ? ' (the log ends without scene.stopped: its writer died)' : ''}`;
  return { identical: divergence === undefined, ...(divergence !== undefined && { divergence }), message, events, unfinished, result };
}

/**
 * The log's model for a replay, which answers from the log: made again when it can be (it says
 * what it accepts, images or not, as it did), else a stand-in without keys that fails any call
 * the log cannot answer.
 */
async function offlineModel(recipe: SceneRecipe, options: ResolveModelOptions | undefined): Promise<SceneModel | undefined> {
  if (recipe.model === undefined) return undefined;
  try {
    return await recipeModel(recipe, options);
  } catch {
    const { spec, protocol } = recipe.model;
    const provider: Provider = {
      name: spec.split(':')[0]!,
      model: spec.slice(spec.indexOf(':') + 1),
      complete: () => Promise.reject(new ProviderError('auth', `the replay asked ${spec} for a reply the log does not hold, and it has no key here`, { retryable: false })),
    };
    return protocol === undefined ? { provider } : { provider, protocol };
  }
}

/** A log for a replay: it lends the scene its hooks and writes nothing (the log being compared stays as it is). */
function replayOnly(path: string, run: string, replay: NonNullable<SessionLog['replay']>): SessionLog {
  return {
    path,
    run,
    failure: undefined,
    attach: () => () => {},
    record: () => false,
    assertRecorded: () => undefined,
    flush: () => 0,
    replay,
    close: async () => {},
    closeSync: () => {},
  };
}
