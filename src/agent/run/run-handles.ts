import type { RunResult } from '../agent-options.js';
import type { RunState } from './run-state.js';
import { handOn, takeController } from './reusable-controller.js';

/**
 * The live parts of a run, beside its plain state: its signal, and whom to tell when it ends.
 *
 * The signal is made when something first asks for it (a provider that forwards it to `fetch`, a
 * tool that listens to it). In Node 20 an AbortSignal costs 4–7 µs to make and about 500 bytes to
 * keep (it gets a hidden class of its own), more than the rest of a scripted turn, and a brain or
 * a tool that answers at once never looks at it. `aborted` is kept beside it and set with every
 * abort (only the agent aborts a run: the rest of the world gets its signal), so the stages ask
 * it without making the signal.
 */
export class RunHandles {
  /** The run's controller, once its signal was asked for. */
  controller: AbortController | undefined = undefined;
  /** Removes the listener on the caller's signal (see `followSignal`). */
  detach: (() => void) | undefined = undefined;
  aborted = false;
  /** Why it was aborted, for a signal made after the abort. */
  reason: unknown = undefined;

  constructor(readonly resolve: RunDone) {}

  /** The run's signal, made on first use; aborted already when the run was. */
  signal(): AbortSignal {
    let controller = this.controller;
    if (controller === undefined) {
      controller = this.controller = takeController();
      if (this.aborted) controller.abort(this.reason);
    }
    return controller.signal;
  }

  /** Aborts the run (and its signal, if it was made). */
  abort(reason?: unknown): void {
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  /** The run has ended: its controller, if it made one, may serve another run. */
  release(): void {
    this.detach?.();
    if (this.controller !== undefined) handOn(this.controller, this.aborted);
  }
}

/** Whom a run tells how it ended; `agent` is the agent's name, so that one callback can serve many agents. */
export type RunDone = (result: RunResult, agent: string) => void;

/**
 * Lets the caller's `signal` abort a run: at once when it is aborted already (the run notes why),
 * else through the agent's `abort` when it fires. `handles.detach` then removes the listener.
 */
export function followSignal(handles: RunHandles, run: RunState, signal: AbortSignal | undefined, agent: { abort(reason: string): void }): void {
  if (signal?.aborted) {
    run.error = 'aborted before it started';
    handles.abort(signal.reason);
  } else if (signal !== undefined) {
    const onAbort = (): void => agent.abort('aborted by the caller');
    signal.addEventListener('abort', onAbort, { once: true });
    // A caller may pass one long-lived signal to many runs: leave no listener behind.
    handles.detach = () => signal.removeEventListener('abort', onAbort);
  }
}
