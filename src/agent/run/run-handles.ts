import type { RunResult } from '../agent-options.js';
import type { RunState } from './run-state.js';

/**
 * The live parts of a run, beside its plain state: its signal, and whom to tell when it ends.
 * `aborted` is set with every abort of `controller` (only the agent aborts it: the rest of the
 * world gets its signal). The stages ask it several times a round; Node's `signal.aborted` is a
 * getter that checks its receiver, on an object of a shape of its own per signal, which a profile
 * of the crowd put at 1 % of a step.
 */
export type RunHandles = { controller: AbortController; resolve: RunDone; detach: (() => void) | undefined; aborted: boolean };

/** Whom a run tells how it ended; `agent` is the agent's name, so that one callback can serve many agents. */
export type RunDone = (result: RunResult, agent: string) => void;

/** Aborts the run's controller, noting it in `handles`. */
export function abortRun(handles: RunHandles, reason?: unknown): void {
  handles.aborted = true;
  handles.controller.abort(reason);
}

/**
 * Lets the caller's `signal` abort a run: at once when it is aborted already (the run notes why),
 * else through the agent's `abort` when it fires. `handles.detach` then removes the listener.
 */
export function followSignal(handles: RunHandles, run: RunState, signal: AbortSignal | undefined, agent: { abort(reason: string): void }): void {
  if (signal?.aborted) {
    run.error = 'aborted before it started';
    abortRun(handles, signal.reason);
  } else if (signal !== undefined) {
    const onAbort = (): void => agent.abort('aborted by the caller');
    signal.addEventListener('abort', onAbort, { once: true });
    // A caller may pass one long-lived signal to many runs: leave no listener behind.
    handles.detach = () => signal.removeEventListener('abort', onAbort);
  }
}
