import type { Args } from '../protocol/types.js';
import { classifyError } from './classify-error.js';
import type { DispatchStats } from './dispatch-stats.js';
import type { Tool, ToolContext, ToolFailure } from './types.js';

/** How one attempt ended, as far as the caller is concerned. */
export type AttemptOutcome = { ok: true; output: unknown } | { ok: false; failure: ToolFailure };

/** What a zombie did after its attempt had already failed. */
export type ZombieReport = { settled: 'pending' | 'resolved' | 'rejected'; lateOutput?: unknown };

export type AttemptOptions = {
  tool: Tool;
  args: Args;
  context: Omit<ToolContext, 'signal'>;
  /** The turn's signal: agent abort, scene stop, or the dispatcher stopping on a host failure. */
  signal: AbortSignal;
  /** 0 = no limit. */
  timeoutMs: number;
  zombieGraceMs: number;
  stats: DispatchStats;
  /** Publishes `tool.zombie`; called after the attempt has settled, possibly much later. */
  onZombie: (report: ZombieReport) => void;
};

/**
 * Runs `tool.execute` once with a signal that aborts on the turn's signal or on `timeoutMs`.
 *
 * p-limit has no timeouts and cannot cancel, so the race is ours: when the signal aborts, the
 * attempt fails at once (`timeout` or `aborted`) whether or not the tool listens. A tool that
 * resolves after that is a zombie: its result is reported through `onZombie` and never returned.
 * A tool still pending after `zombieGraceMs` is reported once as `pending`. A rejection after the
 * abort is the well-behaved answer to the signal and is not a zombie.
 */
export function runAttempt(options: AttemptOptions): Promise<AttemptOutcome> {
  const { tool, timeoutMs } = options;
  if (options.signal.aborted) return Promise.resolve({ ok: false, failure: abortedFailure(options.signal.reason) });
  const deadline = new AbortController();
  const signal = AbortSignal.any([options.signal, deadline.signal]);
  // setTimeout rather than AbortSignal.timeout so that vi.useFakeTimers drives it.
  const timer =
    timeoutMs > 0
      ? setTimeout(() => deadline.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')), timeoutMs)
      : undefined;

  let running: Promise<unknown>;
  try {
    running = Promise.resolve(tool.execute(options.args, { ...options.context, signal }));
  } catch (error) {
    clearTimeout(timer);
    return Promise.resolve({ ok: false, failure: classifyError(error) });
  }

  return new Promise<AttemptOutcome>((resolve) => {
    let done = false;
    const finish = (outcome: AttemptOutcome): boolean => {
      if (done) return false;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
      return true;
    };
    const onAbort = (): void => {
      const timedOut = deadline.signal.aborted && !options.signal.aborted;
      if (timedOut) options.stats.timeouts++;
      if (finish({ ok: false, failure: timedOut ? timeoutFailure(tool.name, timeoutMs) : abortedFailure(options.signal.reason) })) {
        watchZombie(running, options);
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    running.then(
      (output) => finish({ ok: true, output }),
      (error: unknown) => finish({ ok: false, failure: classifyError(error) }),
    );
  });
}

function watchZombie(running: Promise<unknown>, options: AttemptOptions): void {
  const { stats } = options;
  let reportedPending = false;
  let settled = false;
  const report = (zombie: ZombieReport): void => {
    try {
      options.onZombie(zombie);
    } catch {
      // Nobody is left to tell: the call has already failed and been delivered.
    }
  };
  const grace = setTimeout(() => {
    if (settled) return;
    reportedPending = true;
    stats.zombies++;
    stats.zombiesRunning++;
    report({ settled: 'pending' });
  }, options.zombieGraceMs);
  // A tool that never settles must not keep the process alive for the sake of a warning.
  (grace as { unref?: () => void }).unref?.();

  running.then(
    (lateOutput) => {
      settled = true;
      clearTimeout(grace);
      if (reportedPending) stats.zombiesRunning--;
      else stats.zombies++;
      stats.lateResultsDiscarded++;
      report({ settled: 'resolved', lateOutput });
    },
    () => {
      settled = true;
      clearTimeout(grace);
      if (!reportedPending) return;
      stats.zombiesRunning--;
      report({ settled: 'rejected' });
    },
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
