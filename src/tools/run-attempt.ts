import { ownGetter } from '../own-getter.js';
import type { Args } from '../protocol/types.js';
import { classifyError } from './classify-error.js';
import type { DispatchStats } from './dispatch-stats.js';
import type { StopScope, Stoppable } from './stop-scope.js';
import type { CallDispatcher, Tool, ToolContext, ToolFailure, ToolProgress } from './types.js';

/** How one attempt ended, as far as the caller is concerned. */
export type AttemptOutcome = { ok: true; output: unknown } | { ok: false; failure: ToolFailure };

/** What a zombie did after its attempt had already failed. */
export type ZombieReport = { settled: 'pending' | 'resolved' | 'rejected'; lateOutput?: unknown };

/**
 * The running call behind an attempt's context: it makes `context.dispatcher` for the attempt's
 * signal, and publishes what `context.progress` reports.
 */
export type DispatcherSource = {
  dispatcherFor(signal: AbortSignal): CallDispatcher;
  reportProgress(update: ToolProgress): void;
};

export type AttemptOptions = {
  tool: Tool;
  args: Args;
  context: Omit<ToolContext, 'signal' | 'dispatcher'>;
  /** Makes `context.dispatcher` on first read; without it the context has none. */
  source?: DispatcherSource;
  /** The dispatch's stop: agent abort, scene stop, or the dispatcher stopping on a host failure. */
  scope: StopScope;
  /** 0 = no limit. */
  timeoutMs: number;
  /** `performance.now()` when the attempt began: the deadline counts from here. */
  startedAt: number;
  zombieGraceMs: number;
  stats: DispatchStats;
  /** Publishes `tool.zombie`; called after the attempt has settled, possibly much later. */
  onZombie: (report: ZombieReport) => void;
};

/**
 * Runs `tool.execute` once, with a signal that aborts on the dispatch's stop or on `timeoutMs`.
 *
 * A tool that answers synchronously gets its outcome back synchronously: no promise, no timer, no
 * listener, and no `AbortController` unless it read `context.signal` (made on first read). Only an
 * attempt that returns a promise arms its timeout and joins the dispatch's stop scope.
 *
 * p-limit has no timeouts and cannot cancel, so the race is ours: when the signal aborts, the
 * attempt fails at once (`timeout` or `aborted`) whether or not the tool listens. A tool that
 * resolves after that is a zombie: its result is reported through `onZombie` and never returned.
 * A tool still pending after `zombieGraceMs` is reported once as `pending`. A rejection after the
 * abort is the well-behaved answer to the signal and is not a zombie. One exception: an attempt
 * that read `context.dispatcher` (a skill) fails once its body settles, within `zombieGraceMs`,
 * so that its nested calls and child agents report their ends before it does.
 */
export function runAttempt(options: AttemptOptions): AttemptOutcome | Promise<AttemptOutcome> {
  // A publish listener may have aborted the agent after `tool.started`.
  if (options.scope.check()) return { ok: false, failure: abortedFailure(options.scope.reason) };
  const attempt = new Attempt(options);
  let running: Promise<unknown>;
  try {
    const result: unknown = options.tool.execute(options.args, attempt.context);
    if (!isThenable(result)) return { ok: true, output: result };
    running = Promise.resolve(result);
  } catch (error) {
    // A sync throw, or a `then` getter that throws.
    return { ok: false, failure: classifyError(error) };
  }
  return attempt.track(running);
}

const RUNNING = 0;
const SETTLED = 1;
const ABORTED = 2;

class Attempt implements Stoppable {
  readonly context: ToolContext;
  readonly #options: AttemptOptions;
  #state: typeof RUNNING | typeof SETTLED | typeof ABORTED = RUNNING;
  #controller: AbortController | undefined;
  #dispatcher: CallDispatcher | undefined;
  /** The failure of an aborted attempt with nested calls, until its body settles. */
  #deferred: ToolFailure | undefined;
  #aborted = false;
  #abortReason: unknown;
  #resolve: ((outcome: AttemptOutcome) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #grace: ReturnType<typeof setTimeout> | undefined;
  #reportedPending = false;

  constructor(options: AttemptOptions) {
    this.#options = options;
    this.context = new AttemptContext(this, options.context);
  }

  /** The tool's signal, made on first read; already aborted when the attempt was. */
  signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** The dispatcher the tool sees, made on first read: nested calls stop with this attempt. */
  dispatcher(): CallDispatcher | undefined {
    const source = this.#options.source;
    if (source === undefined) return undefined;
    return (this.#dispatcher ??= source.dispatcherFor(this.signal()));
  }

  /** Passes a progress report on while the attempt runs; after its end, nobody waits for one. */
  progress(update: ToolProgress): void {
    if (this.#state === RUNNING) this.#options.source?.reportProgress(update);
  }

  track(running: Promise<unknown>): Promise<AttemptOutcome> {
    const settled = new Promise<AttemptOutcome>((resolve) => {
      this.#resolve = resolve;
    });
    const { timeoutMs, startedAt } = this.#options;
    if (timeoutMs > 0) {
      // setTimeout rather than AbortSignal.timeout so that vi.useFakeTimers drives it. The
      // deadline counts from the start, so whole milliseconds of synchronous work are deducted.
      const remaining = Math.max(1, timeoutMs - Math.floor(performance.now() - startedAt));
      this.#timer = setTimeout(onDeadline, remaining, this);
    }
    this.#options.scope.add(this);
    running.then(
      (output) => this.#settle(true, output),
      (error: unknown) => this.#settle(false, error),
    );
    return settled;
  }

  /** The dispatch stopped (agent abort, scene stop, host failure). */
  stop(reason: unknown): void {
    this.#abort(abortedFailure(reason), reason);
  }

  timedOut(): void {
    if (this.#state !== RUNNING) return;
    const { tool, timeoutMs, stats } = this.#options;
    stats.timeouts++;
    this.#abort(timeoutFailure(tool.name, timeoutMs), new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'));
  }

  graceOver(): void {
    this.#grace = undefined;
    this.#deliverDeferred();
    const { stats } = this.#options;
    this.#reportedPending = true;
    stats.zombies++;
    stats.zombiesRunning++;
    this.#report({ settled: 'pending' });
  }

  #abort(failure: ToolFailure, reason: unknown): void {
    if (this.#state !== RUNNING) return;
    this.#state = ABORTED;
    this.#aborted = true;
    this.#abortReason = reason;
    if (this.#dispatcher !== undefined) {
      // A tool that made nested calls (a skill): they stop with its signal and report their own
      // failures, so its failure waits for its body to settle (at most the grace period). A log
      // then never shows a call ending before the calls it made, nor a run finishing before them.
      this.#deferred = failure;
      clearTimeout(this.#timer);
      this.#controller?.abort(reason);
      this.#grace = setTimeout(onGraceOver, this.#options.zombieGraceMs, this);
      this.#grace.unref?.();
      return;
    }
    this.#end({ ok: false, failure });
    this.#controller?.abort(reason);
    // The grace period starts only now that an abort has happened.
    this.#grace = setTimeout(onGraceOver, this.#options.zombieGraceMs, this);
    // A tool that never settles must not keep the process alive for the sake of a warning.
    this.#grace.unref?.();
  }

  #settle(ok: boolean, value: unknown): void {
    if (this.#state === RUNNING) {
      this.#state = SETTLED;
      this.#end(ok ? { ok: true, output: value } : { ok: false, failure: classifyError(value) });
      return;
    }
    if (this.#state !== ABORTED) return;
    // A zombie settling: the attempt has already failed (and been delivered, unless deferred).
    this.#state = SETTLED;
    clearTimeout(this.#grace);
    this.#deliverDeferred();
    const { stats } = this.#options;
    if (ok) {
      if (this.#reportedPending) stats.zombiesRunning--;
      else stats.zombies++;
      stats.lateResultsDiscarded++;
      this.#report({ settled: 'resolved', lateOutput: value });
    } else if (this.#reportedPending) {
      stats.zombiesRunning--;
      this.#report({ settled: 'rejected' });
    }
  }

  /** Delivers a failure held back until the body of a tool with nested calls settled. */
  #deliverDeferred(): void {
    const failure = this.#deferred;
    if (failure === undefined) return;
    this.#deferred = undefined;
    this.#end({ ok: false, failure });
  }

  #end(outcome: AttemptOutcome): void {
    clearTimeout(this.#timer);
    this.#options.scope.delete(this);
    this.#resolve?.(outcome);
  }

  #report(zombie: ZombieReport): void {
    try {
      this.#options.onZombie(zombie);
    } catch {
      // Nobody is left to tell: the call has already failed and been delivered.
    }
  }
}

/**
 * The `ToolContext` a tool receives. `signal` is an own enumerable getter, so `{ ...context }`
 * still carries it, and it makes the `AbortController` only when a tool reads it: most tools that
 * answer synchronously never do, and a controller costs microseconds in Node 20. `dispatcher`
 * and `progress` are on the prototype instead: only some tools use them, and they need not
 * survive a copy. The attempt behind them is private, out of the tool's reach.
 */
class AttemptContext implements ToolContext {
  // Declared, not initialised: the constructor sets them in the order the old context had.
  declare agent: string;
  declare scene?: string;
  declare callId: string;
  declare attempt: number;
  declare readonly signal: AbortSignal;
  readonly #owner: Attempt;

  static readonly #signalProperty = ownGetter((context: AttemptContext) => context.#owner.signal());

  constructor(owner: Attempt, context: Omit<ToolContext, 'signal' | 'dispatcher'>) {
    this.#owner = owner;
    this.agent = context.agent;
    if (context.scene !== undefined) this.scene = context.scene;
    this.callId = context.callId;
    this.attempt = context.attempt;
    Object.defineProperty(this, 'signal', AttemptContext.#signalProperty);
  }

  get dispatcher(): CallDispatcher | undefined {
    return this.#owner.dispatcher();
  }

  progress(update: ToolProgress): void {
    this.#owner.progress(update);
  }
}

// Shared timer callbacks: the attempt rides along as the timer's argument, so no closure per call.
function onDeadline(attempt: Attempt): void {
  attempt.timedOut();
}

function onGraceOver(attempt: Attempt): void {
  attempt.graceOver();
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    ((typeof value === 'object' && value !== null) || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function timeoutFailure(name: string, timeoutMs: number): ToolFailure {
  return {
    kind: 'timeout',
    message: `tool "${name}" did not finish within ${timeoutMs} ms`,
    retryable: true,
    hint: 'the call took too long; try a smaller request or narrower arguments',
  };
}

/** The failure of a call stopped by an abort (agent abort, scene stop, dispatcher shutdown). */
export function abortedFailure(reason: unknown): ToolFailure {
  const detail = reason instanceof Error || reason instanceof DOMException ? reason.message : undefined;
  return {
    kind: 'aborted',
    message: detail ? `the call was aborted: ${detail}` : 'the call was aborted',
    retryable: false,
  };
}
