import pLimit from 'p-limit';
import { createToolLimiters } from './acquire-slot.js';
import { createDispatchStats } from './dispatch-stats.js';
import type { CallEntry, CallResult, DispatchOptions } from './dispatch-options.js';
import { runCall, type DispatchContext } from './run-call.js';
import { StopScope } from './stop-scope.js';
import { errorMessage } from '../errors.js';

export type { Publish } from '../bus/bus.js';
export type { CallEntry, CallResult, DispatchOptions } from './dispatch-options.js';
// The dispatcher's companions, importable from one place.
export { createToolLimiters, type ToolLimiters } from './acquire-slot.js';
export { createDispatchStats, type DispatchStats } from './dispatch-stats.js';
export { ToolError, type ToolErrorOptions } from './tool-error.js';
export { classifyError } from './classify-error.js';
export { backoff, DEFAULT_BACKOFF_MS, DEFAULT_MAX_BACKOFF_MS } from './run-call.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_ZOMBIE_GRACE_MS = 1_000;
/** The limit used when no global `limiter` is passed (per dispatch, so not shared). */
export const DEFAULT_TURN_CONCURRENCY = 8;


/**
 * Runs the validated calls of one dispatch and returns their results in the model's order.
 *
 * All read-only (and not `sequential`): concurrently, through the tool's own limiter and then the
 * global one. Otherwise one at a time in model order. Each call fails or completes on its own
 * (allSettled). Tool failures never reject; the promise rejects only on a host failure (a
 * `tool.started` the log could not record, a throwing `publish`): the dispatch's other calls are then
 * aborted, nothing more starts, and the error is rethrown once they have settled.
 *
 * @example
 * const results = await dispatchCalls([{ call, tool }], {
 *   signal: controller.signal, agent: 'referee',
 *   publish: (type, data) => bus.publish(type, data, { agent: 'referee' }),
 *   assertRecorded: (event) => log.assertRecorded(event),
 * });
 */
export function dispatchCalls(calls: readonly CallEntry[], options: DispatchOptions): Promise<CallResult[]> {
  try {
    const outcome = dispatchCallsNow(calls, options);
    return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `dispatchCalls`, answering synchronously when every call did (no tool returned a promise, no
 * slot had to be waited for, no retry): the agent then goes on to its observation in the same
 * step, without a round trip through the microtask queue. Throws (or rejects) only on a host
 * failure, as `dispatchCalls` rejects.
 */
export function dispatchCallsNow(calls: readonly CallEntry[], options: DispatchOptions): CallResult[] | Promise<CallResult[]> {
  const scope = new StopScope(options);
  const concurrent = !options.sequential && calls.every(isReadOnly);
  const failure: { error?: { error: unknown } } = {};
  const dispatch: DispatchContext = {
    options,
    scope,
    // A private limiter matters only when the dispatch could run more calls at once than it allows.
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
    dispatchNested: dispatchCalls,
    onHostFailure: (error) => {
      if (failure.error !== undefined) return;
      failure.error = { error };
      scope.stop(new Error(`dispatch stopped by a host failure: ${errorMessage(error)}`));
    },
  };

  const results: (CallResult | Promise<CallResult>)[] = [];
  let settled = true;
  try {
    if (concurrent) {
      let pending = false;
      for (let index = 0; index < calls.length; index++) {
        const { call, tool } = calls[index]!;
        const result = runCall(call, tool, dispatch);
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
        const result = runCall(call, tool, dispatch);
        if (result instanceof Promise) {
          settled = false;
          return continueInOrder(calls, index, result, results as CallResult[], dispatch, failure).finally(() => scope.close());
        }
        results.push(result);
      }
    }
  } finally {
    if (settled) scope.close();
  }
  return finish(results as CallResult[], failure.error);
}

/** The rest of an in-order dispatch once one call had to wait. */
async function continueInOrder(
  calls: readonly CallEntry[],
  from: number,
  waiting: Promise<CallResult>,
  results: CallResult[],
  dispatch: DispatchContext,
  failure: { error?: { error: unknown } },
): Promise<CallResult[]> {
  results.push(await waiting);
  for (let index = from + 1; index < calls.length; index++) {
    if (failure.error !== undefined) break;
    const { call, tool } = calls[index]!;
    const result = runCall(call, tool, dispatch);
    results.push(result instanceof Promise ? await result : result);
  }
  return finish(results, failure.error);
}

function finish(results: CallResult[], hostError: { error: unknown } | undefined): CallResult[] {
  if (hostError !== undefined) throw hostError.error;
  return results;
}

function isReadOnly(entry: CallEntry): boolean {
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
