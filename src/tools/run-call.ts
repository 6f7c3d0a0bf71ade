import type { LimitFunction } from 'p-limit';
import type { TroupeEvents } from '../bus/events.js';
import type { Args, ToolCall } from '../protocol/types.js';
import { acquireSlots, hasFreeSlot, holdSlot, toolLimiter, type ReleaseSlot, type ToolLimiters } from './acquire-slot.js';
import type { Publish } from '../bus/bus.js';
import type { CallResult, DispatchCalls, DispatchOptions, RecordedAttempt } from './dispatch-options.js';
import { ToolError } from './tool-error.js';
import type { DispatchStats } from './dispatch-stats.js';
import { freezeArgs } from './freeze-args.js';
import { checkToolResult, describeParts, isToolResult } from './result-parts.js';
import { abortedFailure, runAttempt, type AttemptOutcome, type DispatcherSource, type ZombieReport } from './run-attempt.js';
import type { StopScope } from './stop-scope.js';
import type { CallDispatcher, Tool, ToolContext, ToolFailure, ToolProgress } from './types.js';
import type { ToolResult } from './result-parts.js';
import { errorMessage } from '../errors.js';

import { backoff, mayRetry } from './retry-policy.js';

export { backoff, DEFAULT_BACKOFF_MS, DEFAULT_MAX_BACKOFF_MS } from './retry-policy.js';

/** What the model hears of a call that was running when the process stopped, and was not run again. */
export const INTERRUPTED =
  'the outcome of this call is unknown: it was running when the process stopped, and it may or may not have taken effect; check before calling it again';

/** What every call of one dispatch shares, with the options' defaults filled in. */
export type DispatchContext = {
  options: DispatchOptions;
  scope: StopScope;
  /** The global limiter; undefined when none was passed and the dispatch cannot exceed the default. */
  limiter: LimitFunction | undefined;
  toolLimiters: ToolLimiters;
  stats: DispatchStats;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  clock: () => number;
  /** Whether `clock` is `performance.now` itself, so its readings can place timeouts. */
  realClock: boolean;
  defaultTimeoutMs: number;
  zombieGraceMs: number;
  /** `dispatchCalls` itself, for nested calls: a reference, so this module imports it as a type only. */
  dispatchNested: DispatchCalls;
  onHostFailure: (error: unknown) => void;
};

/**
 * Runs one call to its end, attempts and retries included. Never rejects: a tool's failure is a
 * result, and anything else is reported through `onHostFailure`.
 *
 * Returns the result itself when every step finished synchronously (a free slot, a tool that
 * answered without a promise, no retry): that is most calls, and it costs no promise, no timer
 * and no limiter task. The free slot is not taken for such a call, since no other code can run
 * while it executes; a tool that returns a promise takes its slots before anything else runs.
 */
export function runCall(call: ToolCall, tool: Tool, dispatch: DispatchContext): CallResult | Promise<CallResult> {
  const run = new CallRun(call, tool, dispatch);
  try {
    run.prepare();
    if (dispatch.scope.check()) return run.finalFailure(abortedFailure(dispatch.scope.reason));
    if (!hasFreeSlot(run.toolLimiter) || !hasFreeSlot(dispatch.limiter)) return continueCall(run, undefined, false);
    const outcome = run.attempt(undefined);
    if (outcome instanceof Promise) return continueCall(run, outcome, false);
    return run.afterAttempt(outcome) ?? continueCall(run, undefined, true);
  } catch (error) {
    return run.hostFailure(error);
  }
}

// The rest of a call once something had to wait: a queued slot, a promise, a backoff.
async function continueCall(run: CallRun, pending: Promise<AttemptOutcome> | undefined, retrying: boolean): Promise<CallResult> {
  const { dispatch } = run;
  try {
    if (pending !== undefined) {
      const done = run.afterAttempt(await pending);
      if (done !== undefined) return done;
      retrying = true;
    }
    for (;;) {
      if (retrying) {
        try {
          await dispatch.sleep(backoff(run.tool, run.attempts, run.retryKind), dispatch.scope.signal);
        } catch {
          // fall through: the stop check below ends the call
        }
        if (!dispatch.scope.check()) dispatch.stats.retries++;
      }
      retrying = true;
      if (dispatch.scope.check()) return run.finalFailure(abortedFailure(dispatch.scope.reason));
      let release: ReleaseSlot | undefined;
      if (!hasFreeSlot(run.toolLimiter) || !hasFreeSlot(dispatch.limiter)) {
        try {
          // The tool slot first, so that a call waiting for a busy tool holds no global slot.
          release = await acquireSlots([run.toolLimiter, dispatch.limiter], dispatch.scope);
        } catch (error) {
          return run.finalFailure(abortedFailure(dispatch.scope.stopped ? dispatch.scope.reason : error));
        }
      }
      let outcome: AttemptOutcome;
      try {
        const attempt = run.attempt(release);
        outcome = attempt instanceof Promise ? await attempt : attempt;
      } finally {
        release?.();
      }
      const done = run.afterAttempt(outcome);
      if (done !== undefined) return done;
    }
  } catch (error) {
    return run.hostFailure(error);
  }
}

/** One call's state across its attempts. */
class CallRun implements DispatcherSource {
  readonly call: ToolCall;
  readonly tool: Tool;
  readonly dispatch: DispatchContext;
  /** The frozen copy once `prepare` has made it; the validated args until then. */
  args: Args;
  attempts = 0;
  toolLimiter: LimitFunction | undefined = undefined;
  /** The kind of the failure being retried: its delays apply. */
  retryKind: ToolFailure['kind'] | undefined = undefined;
  #timeoutMs = 0;
  #firstStart: number | undefined = undefined;
  #attemptStart = 0;
  /** The id of the current attempt's `tool.started`. */
  startedId = '';

  constructor(call: ToolCall, tool: Tool, dispatch: DispatchContext) {
    this.call = call;
    this.tool = tool;
    this.dispatch = dispatch;
    this.args = call.args;
  }

  /** The steps that can fail only on a host bug (a function in the args, a bad `concurrency`). */
  prepare(): void {
    const { tool, dispatch } = this;
    this.args = freezeArgs(this.call.args);
    this.toolLimiter = toolLimiter(dispatch.toolLimiters, tool.name, tool.concurrency);
    this.#timeoutMs = tool.timeoutMs ?? dispatch.defaultTimeoutMs;
  }

  /**
   * Publishes `tool.started`, waits until it is on record, and runs one attempt. Without `release`
   * (the fast path) the slots are free but not taken; an attempt that goes async takes them now.
   */
  attempt(release: ReleaseSlot | undefined): AttemptOutcome | Promise<AttemptOutcome> {
    const { dispatch, call } = this;
    const start = dispatch.clock();
    this.#firstStart ??= start;
    this.#attemptStart = start;
    this.attempts++;
    const started = dispatch.options.publish('tool.started', { callId: call.callId, name: call.name, args: this.args, attempt: this.attempts });
    this.startedId = started.id;
    // Write-ahead: a tool runs only once its start is on record (on disk, when a log is kept:
    // the calls that start together share one fsync). Fail closed otherwise.
    const onRecord = dispatch.options.assertRecorded?.(started);
    // Waiting for the disk is not running: the slots are taken once the start is there, so that
    // every call a tick starts shares one group commit, not one per limiter's worth of calls.
    if (onRecord !== undefined) return onRecord.then(() => (release === undefined ? this.executeInSlots() : this.execute()));
    const outcome = this.execute();
    if (release === undefined && outcome instanceof Promise) {
      // Nothing else has run since `hasFreeSlot` said yes, unless the tool itself dispatched
      // through the same limiter synchronously, which p-limit forbids anyway (it deadlocks). A
      // skill's nested calls may have run, but they take neither this limiter nor this tool's.
      holdSlot(this.toolLimiter, outcome);
      holdSlot(dispatch.limiter, outcome);
    }
    return outcome;
  }

  /** Runs the tool once its start is on disk: in free slots at once, else once it has them. */
  private executeInSlots(): AttemptOutcome | Promise<AttemptOutcome> {
    const { dispatch } = this;
    if (hasFreeSlot(this.toolLimiter) && hasFreeSlot(dispatch.limiter)) {
      const outcome = this.execute();
      if (outcome instanceof Promise) {
        holdSlot(this.toolLimiter, outcome);
        holdSlot(dispatch.limiter, outcome);
      }
      return outcome;
    }
    return acquireSlots([this.toolLimiter, dispatch.limiter], dispatch.scope).then(
      async (release) => {
        try {
          return await this.execute();
        } finally {
          release();
        }
      },
      (error: unknown): AttemptOutcome => ({ ok: false, failure: abortedFailure(dispatch.scope.stopped ? dispatch.scope.reason : error) }),
    );
  }

  /** Runs the tool once: for real, or, when a journal recorded this attempt, as it went then. */
  private execute(): AttemptOutcome | Promise<AttemptOutcome> {
    const { dispatch, call } = this;
    const recorded = dispatch.options.journal?.(call, this.attempts);
    return runAttempt({
      tool: recorded === undefined ? this.tool : this.replayed(recorded),
      args: this.args,
      context: { agent: dispatch.options.agent, scene: dispatch.options.scene, callId: call.callId, attempt: this.attempts },
      source: this,
      scope: dispatch.scope,
      timeoutMs: this.#timeoutMs,
      startedAt: dispatch.realClock ? dispatch.clock() : performance.now(),
      zombieGraceMs: dispatch.zombieGraceMs,
      stats: dispatch.stats,
      onZombie: (report: ZombieReport) => dispatch.options.publish('tool.zombie', { callId: call.callId, name: call.name, ...report }),
    });
  }

  /**
   * The tool as a journal replays it: the recorded output or failure, or, for an attempt that
   * never ended, the tool itself again when it is safe to repeat (read-only or idempotent) and
   * otherwise a failure saying the outcome is unknown; `tool.interrupted` says which.
   */
  private replayed(recorded: RecordedAttempt | Promise<RecordedAttempt>): Tool {
    const { tool, call, dispatch } = this;
    const settle = (outcome: RecordedAttempt, args: Args, context: ToolContext): unknown => {
      if (outcome.kind === 'completed') return outcome.output;
      if (outcome.kind === 'failed') throw new ToolError(outcome.error.message, outcome.error);
      const rerun = tool.readOnly === true || tool.idempotent === true;
      dispatch.options.publish('tool.interrupted', { callId: call.callId, name: call.name, args, rerun });
      // An earlier resume decided already, and recorded how that ended: it holds, nothing runs.
      if (outcome.then !== undefined) return settle(outcome.then, args, context);
      if (rerun) return tool.execute(args, context);
      throw new ToolError(INTERRUPTED, { kind: 'unknown', retryable: false });
    };
    // At once when the log's next event is this attempt's end, as the tool answered the first time.
    const execute = (args: Args, context: ToolContext): unknown =>
      recorded instanceof Promise ? recorded.then((outcome) => settle(outcome, args, context)) : settle(recorded, args, context);
    return { ...tool, execute };
  }

  /** Publishes how an attempt ended; returns the call's result, or undefined to retry. */
  afterAttempt(outcome: AttemptOutcome): CallResult | undefined {
    const { dispatch, call, args, attempts } = this;
    const { callId, name } = call;
    const now = dispatch.clock();
    const durationMs = Math.round(now - this.#attemptStart);
    const totalMs = Math.round(now - (this.#firstStart ?? now));
    if (outcome.ok && isToolResult(outcome.output)) outcome = checkedResult(name, outcome.output);
    if (outcome.ok) {
      const { output } = outcome;
      const data: TroupeEvents['tool.completed'] = { callId, name, args, output, durationMs, attempt: attempts };
      if (isToolResult(output)) data.parts = describeParts(output);
      dispatch.options.publish('tool.completed', data);
      return { callId, name, args, status: 'completed', output, durationMs: totalMs, attempts, startedAt: this.#firstStart! };
    }
    const failure = outcome.failure;
    dispatch.options.publish('tool.failed', { callId, name, args, error: failure, attempt: attempts, durationMs });
    if (!mayRetry(this.tool, failure, attempts)) return this.result(failure, totalMs);
    this.retryKind = failure.kind;
    return undefined;
  }

  /** Ends a call that will not run (again): one `tool.failed`, with `attempt: 0` if it never started. */
  finalFailure(failure: ToolFailure): CallResult {
    const { callId, name } = this.call;
    this.dispatch.options.publish('tool.failed', { callId, name, args: this.args, error: failure, attempt: this.attempts, durationMs: 0 });
    return this.result(failure, this.#firstStart === undefined ? 0 : Math.round(this.dispatch.clock() - this.#firstStart));
  }

  hostFailure(error: unknown): CallResult {
    this.dispatch.onHostFailure(error);
    const failure: ToolFailure = { kind: 'unknown', message: `not run: ${errorMessage(error)}`, retryable: false };
    try {
      return this.finalFailure(failure);
    } catch {
      return this.result(failure, 0);
    }
  }

  result(failure: ToolFailure, durationMs: number): CallResult {
    const { callId, name } = this.call;
    const result: CallResult = { callId, name, args: this.args, status: 'failed', error: failure, durationMs, attempts: this.attempts };
    if (this.#firstStart !== undefined) result.startedAt = this.#firstStart;
    return result;
  }

  dispatcherFor(signal: AbortSignal): CallDispatcher {
    return new NestedDispatcher(this, signal);
  }

  /**
   * Publishes `tool.progress` for the running attempt. With the bus at hand its cause is the
   * attempt's `tool.started`, as for nested calls; a report that is not a number of work done
   * throws, failing the call like any other bug in the tool.
   */
  reportProgress(update: ToolProgress): void {
    const { dispatch, call } = this;
    const data: TroupeEvents['tool.progress'] = { callId: call.callId, name: call.name, ...checkProgress(update) };
    const { bus, agent, scene } = dispatch.options;
    if (bus === undefined) dispatch.options.publish('tool.progress', data);
    else bus.publish('tool.progress', data, { agent, scene, cause: this.startedId });
  }
}

/** Longest progress message passed on; servers and tools may send anything. */
const MAX_PROGRESS_MESSAGE_CHARS = 1_000;

function checkProgress(update: ToolProgress): ToolProgress {
  const { progress, total, message } = (update ?? {}) as Partial<ToolProgress>;
  if (typeof progress !== 'number' || !Number.isFinite(progress)) {
    throw new TypeError(`context.progress needs { progress: number, total?: number, message?: string }; progress was ${String(progress)}`);
  }
  const checked: ToolProgress = { progress };
  if (typeof total === 'number' && Number.isFinite(total)) checked.total = total;
  if (typeof message === 'string' && message !== '') {
    checked.message = message.length > MAX_PROGRESS_MESSAGE_CHARS ? `${message.slice(0, MAX_PROGRESS_MESSAGE_CHARS)}…` : message;
  }
  return checked;
}

/**
 * `context.dispatcher` of one attempt. Nested calls share the dispatch's per-tool limiters, stats,
 * write-ahead check, clock, sleep and defaults, and stop with the attempt's signal (agent abort,
 * scene stop, the calling tool's timeout). They never take the global limiter: the calling tool
 * holds one of its slots while it waits for them, so with a limit of 1 they would wait forever.
 */
class NestedDispatcher implements CallDispatcher {
  readonly startedId: string;
  readonly #run: CallRun;
  readonly #signal: AbortSignal;

  constructor(run: CallRun, signal: AbortSignal) {
    this.#run = run;
    this.#signal = signal;
    this.startedId = run.startedId;
  }

  get enclosing(): readonly string[] | undefined {
    return this.#run.dispatch.options.enclosing;
  }

  get bus(): DispatchOptions['bus'] {
    return this.#run.dispatch.options.bus;
  }

  get toolLimiters(): DispatchContext['toolLimiters'] {
    return this.#run.dispatch.toolLimiters;
  }

  get engine(): DispatchOptions['engine'] {
    return this.#run.dispatch.options.engine;
  }

  get assertRecorded(): DispatchOptions['assertRecorded'] {
    return this.#run.dispatch.options.assertRecorded;
  }

  async dispatch(calls: readonly { call: ToolCall; tool: Tool }[], enclosing: readonly string[]): Promise<CallResult[]> {
    const { dispatch } = this.#run;
    const { options } = dispatch;
    const { bus } = options;
    // With the bus at hand, nested events name the call that made them as their cause, so a log
    // reads as a tree; the agent's own `publish` would name the dispatch's cause instead.
    const meta = { agent: options.agent, scene: options.scene, cause: this.startedId };
    const publish: Publish = bus === undefined ? options.publish : (type, data) => bus.publish(type, data, meta);
    try {
      return await dispatch.dispatchNested(calls, {
        ...options,
        signal: this.#signal,
        // The attempt's signal stops them (its timeout too), not only the agent's abort.
        abortFlag: undefined,
        publish,
        limiter: undefined,
        toolLimiters: dispatch.toolLimiters,
        stats: dispatch.stats,
        sleep: dispatch.sleep,
        sequential: true,
        enclosing,
      });
    } catch (error) {
      // A nested `tool.started` the log could not record stops the calling dispatch too: fail closed.
      dispatch.onHostFailure(error);
      throw error;
    }
  }
}

/**
 * A rich result as the model and the bus get it: checked and copied, or, when a part is
 * malformed, a failure naming it. Retrying would return the same bad parts, so it is final.
 */
function checkedResult(name: string, result: ToolResult): AttemptOutcome {
  const checked = checkToolResult(result);
  if (checked.ok) return { ok: true, output: checked.value };
  return { ok: false, failure: { kind: 'execution', message: `tool "${name}" returned a malformed result: ${checked.problem}`, retryable: false } };
}
