import pLimit, { type LimitFunction } from 'p-limit';
import type { Bus, Publish } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import type { Args, ToolCall } from '../protocol/types.js';
import { createToolLimiters, type ToolLimiters } from './acquire-slot.js';
import { createDispatchStats, type DispatchStats } from './dispatch-stats.js';
import { runCall, type TurnContext } from './run-call.js';
import { StopScope } from './stop-scope.js';
import type { Tool, ToolFailure } from './types.js';

export type { Publish } from '../bus/bus.js';
// The dispatcher's companions, importable from one place.
export { createToolLimiters, type ToolLimiters } from './acquire-slot.js';
export { createDispatchStats, type DispatchStats } from './dispatch-stats.js';
export { ToolError, type ToolErrorOptions } from './tool-error.js';
export { classifyError } from './classify-error.js';
export { backoff, DEFAULT_BACKOFF_MS, DEFAULT_MAX_BACKOFF_MS } from './run-call.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_ZOMBIE_GRACE_MS = 1_000;
/** The limit used when no global `limiter` is passed (per turn, so not shared). */
export const DEFAULT_TURN_CONCURRENCY = 8;

/** The result of one call, in the model's order; `args` is the frozen copy the tool received. */
export type CallResult =
  | { callId: string; name: string; args: Args; status: 'completed'; output: unknown; durationMs: number; attempts: number }
  | { callId: string; name: string; args: Args; status: 'failed'; error: ToolFailure; durationMs: number; attempts: number };

/** The options of `dispatchTurn`: where it reports, what stops it, and its limits. */
export type DispatchOptions = {
  /** Agent abort or scene stop. */
  signal: AbortSignal;
  agent: string;
  scene?: string;
  publish: Publish;
  /** Global limiter, possibly shared by many agents; never `clearQueue`d by the dispatcher. */
  limiter?: LimitFunction;
  /** Per-tool limiters (`tool.concurrency`), created lazily; share one map to share the limits. */
  toolLimiters?: ToolLimiters;
  /** Run one call at a time in model order even when all are read-only (approval in the turn). */
  sequential?: boolean;
  /** Write-ahead check: throws when the log could not record this `tool.started`. */
  assertRecorded?: (event: Envelope<'tool.started'>) => void;
  /** For tools without `timeoutMs` (default 30 000; 0 = no limit). */
  defaultTimeoutMs?: number;
  /** Waits between retries; rejects or resolves early when the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** How long a tool may ignore its aborted signal before `tool.zombie` `pending` (default 1000). */
  zombieGraceMs?: number;
  /** Counters (zombies, timeouts, retries) updated as calls run. */
  stats?: DispatchStats;
  /**
   * Where every `durationMs` comes from (default `performance.now`). Pass the bus clock so that
   * scripted runs publish identical events. Timeouts still run on real (or faked) timers.
   */
  clock?: () => number;
  /**
   * The bus `publish` publishes on. Tools that run other tools need it: a nested call's events
   * name the call that made it as their `cause`, and a skill's child agent runs on it.
   */
  bus?: Bus;
  /**
   * Tool names of the calls this turn's calls are nested in, outermost first. Set by
   * `context.dispatcher.dispatch`; skills read it to refuse recursion and deep nesting.
   */
  enclosing?: readonly string[];
};

type Entry = { call: ToolCall; tool: Tool };

/**
 * Runs the validated calls of one turn and returns their results in the model's order.
 *
 * All read-only (and not `sequential`): concurrently, through the tool's own limiter and then the
 * global one. Otherwise one at a time in model order. Each call fails or completes on its own
 * (allSettled). Tool failures never reject; the promise rejects only on a host failure (a
 * `tool.started` the log could not record, a throwing `publish`): the turn's other calls are then
 * aborted, nothing more starts, and the error is rethrown once they have settled.
 *
 * @example
 * const results = await dispatchTurn([{ call, tool }], {
 *   signal: controller.signal, agent: 'referee',
 *   publish: (type, data) => bus.publish(type, data, { agent: 'referee' }),
 *   assertRecorded: (event) => log.assertRecorded(event),
 * });
 */
export function dispatchTurn(calls: readonly Entry[], options: DispatchOptions): Promise<CallResult[]> {
  try {
    const outcome = dispatchTurnNow(calls, options);
    return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `dispatchTurn`, answering synchronously when every call did (no tool returned a promise, no
 * slot had to be waited for, no retry): the agent then goes on to its observation in the same
 * step, without a round trip through the microtask queue. Throws (or rejects) only on a host
 * failure, as `dispatchTurn` rejects.
 */
export function dispatchTurnNow(calls: readonly Entry[], options: DispatchOptions): CallResult[] | Promise<CallResult[]> {
  const scope = new StopScope(options.signal);
  const concurrent = !options.sequential && calls.every(isReadOnly);
  const failure: { error?: { error: unknown } } = {};
  const turn: TurnContext = {
    options,
    scope,
    // A private limiter matters only when the turn could run more calls at once than it allows.
    limiter:
      options.limiter ??
      (concurrent && calls.length > DEFAULT_TURN_CONCURRENCY ? pLimit({ concurrency: DEFAULT_TURN_CONCURRENCY, rejectOnClear: true }) : undefined),
    toolLimiters: options.toolLimiters ?? createToolLimiters(),
    stats: options.stats ?? createDispatchStats(),
    sleep: options.sleep ?? sleepFor,
    clock: options.clock ?? now,
    realClock: options.clock === undefined,
    defaultTimeoutMs: options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    zombieGraceMs: options.zombieGraceMs ?? DEFAULT_ZOMBIE_GRACE_MS,
    dispatchNested: dispatchTurn,
    onHostFailure: (error) => {
      if (failure.error !== undefined) return;
      failure.error = { error };
      scope.stop(new Error(`dispatch stopped by a host failure: ${error instanceof Error ? error.message : String(error)}`));
    },
  };

  const results: (CallResult | Promise<CallResult>)[] = [];
  let settled = true;
  try {
    if (concurrent) {
      let pending = false;
      for (const { call, tool } of calls) {
        const result = runCall(call, tool, turn);
        if (result instanceof Promise) pending = true;
        results.push(result);
      }
      // Calls that answered synchronously are already results; wait only when one is waiting.
      if (pending) {
        settled = false;
        return Promise.all(results)
          .then((all) => finish(all, failure.error))
          .finally(() => scope.close());
      }
    } else {
      for (let index = 0; index < calls.length; index++) {
        if (failure.error !== undefined) break;
        const { call, tool } = calls[index]!;
        const result = runCall(call, tool, turn);
        if (result instanceof Promise) {
          settled = false;
          return continueInOrder(calls, index, result, results as CallResult[], turn, failure).finally(() => scope.close());
        }
        results.push(result);
      }
    }
  } finally {
    if (settled) scope.close();
  }
  return finish(results as CallResult[], failure.error);
}

/** The rest of an in-order turn once one call had to wait. */
async function continueInOrder(
  calls: readonly Entry[],
  from: number,
  waiting: Promise<CallResult>,
  results: CallResult[],
  turn: TurnContext,
  failure: { error?: { error: unknown } },
): Promise<CallResult[]> {
  results.push(await waiting);
  for (let index = from + 1; index < calls.length; index++) {
    if (failure.error !== undefined) break;
    const { call, tool } = calls[index]!;
    const result = runCall(call, tool, turn);
    results.push(result instanceof Promise ? await result : result);
  }
  return finish(results, failure.error);
}

function finish(results: CallResult[], hostError: { error: unknown } | undefined): CallResult[] {
  if (hostError !== undefined) throw hostError.error;
  return results;
}

function isReadOnly(entry: Entry): boolean {
  return entry.tool.readOnly === true;
}

function now(): number {
  // Read at each call, not captured once, so that fake timers that replace `performance` apply.
  return performance.now();
}

/** The default `sleep`: a `setTimeout` (so fake timers drive it) that rejects on abort. */
export function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
