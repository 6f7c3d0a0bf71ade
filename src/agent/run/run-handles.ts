import type { RunResult } from '../agent-options.js';
import type { RunState } from './run-state.js';

/** The live parts of a run, beside its plain state: its signal, and whom to tell when it ends. */
export type RunHandles = { controller: AbortController; resolve: (result: RunResult) => void; detach: (() => void) | undefined };

/**
 * Lets the caller's `signal` abort a run: at once when it is aborted already (the run notes why),
 * else through the agent's `abort` when it fires. `handles.detach` then removes the listener.
 */
export function followSignal(handles: RunHandles, run: RunState, signal: AbortSignal | undefined, agent: { abort(reason: string): void }): void {
  if (signal?.aborted) {
    run.error = 'aborted before it started';
    handles.controller.abort(signal.reason);
  } else if (signal !== undefined) {
    const onAbort = (): void => agent.abort('aborted by the caller');
    signal.addEventListener('abort', onAbort, { once: true });
    // A caller may pass one long-lived signal to many runs: leave no listener behind.
    handles.detach = () => signal.removeEventListener('abort', onAbort);
  }
}
