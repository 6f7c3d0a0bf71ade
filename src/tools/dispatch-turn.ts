import pLimit, { type LimitFunction } from 'p-limit';
import type { Envelope, EventType, TroupeEvents } from '../bus/events.js';
import type { Args, ToolCall } from '../protocol/types.js';
import { acquireSlots, createToolLimiters, toolLimiter, type ToolLimiters } from './acquire-slot.js';
import { createDispatchStats, type DispatchStats } from './dispatch-stats.js';
import { freezeArgs } from './freeze-args.js';
import { abortedFailure, runAttempt, type AttemptOutcome } from './run-attempt.js';
import type { Tool, ToolFailure } from './types.js';

// The dispatcher's companions, importable from one place.
export { createToolLimiters, type ToolLimiters } from './acquire-slot.js';
export { createDispatchStats, type DispatchStats } from './dispatch-stats.js';
export { ToolError, type ToolErrorOptions } from './tool-error.js';
export { classifyError } from './classify-error.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_ZOMBIE_GRACE_MS = 1_000;
export const DEFAULT_BACKOFF_MS = 100;
export const DEFAULT_MAX_BACKOFF_MS = 5_000;
/** The limit used when no global `limiter` is passed (per turn, so not shared). */
export const DEFAULT_TURN_CONCURRENCY = 8;

/** The result of one call, in the model's order; `args` is the frozen copy the tool received. */
export type CallResult =
  | { callId: string; name: string; args: Args; status: 'completed'; output: unknown; durationMs: number; attempts: number }
  | { callId: string; name: string; args: Args; status: 'failed'; error: ToolFailure; durationMs: number; attempts: number };

/** Publishes one event; the agent binds `bus.publish` with its agent, scene and cause. */
export type Publish = <K extends EventType>(type: K, data: TroupeEvents[K]) => Envelope<K>;

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
export async function dispatchTurn(calls: readonly Entry[], options: DispatchOptions): Promise<CallResult[]> {
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  let hostError: { error: unknown } | undefined;
  const onHostFailure = (error: unknown): void => {
    if (hostError !== undefined) return;
    hostError = { error };
    stop.abort(new Error(`dispatch stopped by a host failure: ${error instanceof Error ? error.message : String(error)}`));
  };
  const context: CallContext = {
    options,
    signal,
    onHostFailure,
    limiter: options.limiter ?? pLimit({ concurrency: DEFAULT_TURN_CONCURRENCY, rejectOnClear: true }),
    toolLimiters: options.toolLimiters ?? createToolLimiters(),
    stats: options.stats ?? createDispatchStats(),
    sleep: options.sleep ?? sleepFor,
  };

  let results: CallResult[];
  if (!options.sequential && calls.every((entry) => entry.tool.readOnly === true)) {
    results = await Promise.all(calls.map((entry) => runCall(entry, context)));
  } else {
    results = [];
    for (const entry of calls) {
      if (hostError !== undefined) break;
      results.push(await runCall(entry, context));
    }
  }
  if (hostError !== undefined) throw hostError.error;
  return results;
}

type CallContext = {
  options: DispatchOptions;
  signal: AbortSignal;
  onHostFailure: (error: unknown) => void;
  limiter: LimitFunction;
  toolLimiters: ToolLimiters;
  stats: DispatchStats;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
};

// Never rejects: a tool's failure is a result, and anything else is reported as a host failure.
async function runCall({ call, tool }: Entry, context: CallContext): Promise<CallResult> {
  const { options, signal, stats } = context;
  const { callId, name } = call;
  let args: Args = call.args;
  let attempts = 0;
  let firstStart: number | undefined;
  const result = (failure: ToolFailure, durationMs: number): CallResult =>
    ({ callId, name, args, status: 'failed', error: failure, durationMs, attempts });
  const finalFailure = (failure: ToolFailure): CallResult => {
    options.publish('tool.failed', { callId, name, args, error: failure, attempt: attempts, durationMs: 0 });
    return result(failure, firstStart === undefined ? 0 : elapsed(firstStart));
  };

  try {
    args = freezeArgs(call.args);
    const limiters = [toolLimiter(context.toolLimiters, tool.name, tool.concurrency), context.limiter].filter(
      (limiter): limiter is LimitFunction => limiter !== undefined,
    );
    const maxAttempts = tool.readOnly === true || tool.idempotent === true ? Math.max(1, Math.floor(tool.retry?.attempts ?? 1)) : 1;
    const timeoutMs = tool.timeoutMs ?? options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;

    for (;;) {
      if (signal.aborted) return finalFailure(abortedFailure(signal.reason));
      let release;
      try {
        release = await acquireSlots(limiters, signal);
      } catch (error) {
        return finalFailure(abortedFailure(signal.aborted ? signal.reason : error));
      }
      let outcome: AttemptOutcome;
      const attemptStart = performance.now();
      firstStart ??= attemptStart;
      try {
        attempts++;
        const started = options.publish('tool.started', { callId, name, args, attempt: attempts });
        // Write-ahead: a tool runs only once its start is on record. Fail closed otherwise.
        options.assertRecorded?.(started);
        outcome = await runAttempt({
          tool,
          args,
          context: { agent: options.agent, ...(options.scene === undefined ? {} : { scene: options.scene }), callId, attempt: attempts },
          signal,
          timeoutMs,
          zombieGraceMs: options.zombieGraceMs ?? DEFAULT_ZOMBIE_GRACE_MS,
          stats,
          onZombie: (report) => options.publish('tool.zombie', { callId, name, ...report }),
        });
      } finally {
        release();
      }
      const durationMs = elapsed(attemptStart);
      if (outcome.ok) {
        options.publish('tool.completed', { callId, name, args, output: outcome.output, durationMs, attempt: attempts });
        return { callId, name, args, status: 'completed', output: outcome.output, durationMs: elapsed(firstStart), attempts };
      }
      const failure = outcome.failure;
      options.publish('tool.failed', { callId, name, args, error: failure, attempt: attempts, durationMs });
      if (!failure.retryable || failure.kind === 'aborted' || attempts >= maxAttempts) return result(failure, elapsed(firstStart));
      try {
        await context.sleep(backoff(tool, attempts), signal);
      } catch {
        // fall through: the abort check at the top of the loop ends the call
      }
      if (!signal.aborted) stats.retries++;
    }
  } catch (error) {
    context.onHostFailure(error);
    const failure: ToolFailure = { kind: 'unknown', message: `not run: ${error instanceof Error ? error.message : String(error)}`, retryable: false };
    try {
      return finalFailure(failure);
    } catch {
      return result(failure, 0);
    }
  }
}

/** Delay before attempt `attempt + 1`: `backoffMs` doubled per attempt, capped by `maxBackoffMs`. */
export function backoff(tool: Pick<Tool, 'retry'>, attempt: number): number {
  const base = tool.retry?.backoffMs ?? DEFAULT_BACKOFF_MS;
  const cap = tool.retry?.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
  return Math.min(base * 2 ** (attempt - 1), cap);
}

function elapsed(since: number): number {
  return Math.round(performance.now() - since);
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
