import { getEventListeners } from 'node:events';

// Counting listeners is slow in Node 20; a provider that leaves one behind is caught within a few
// runs, long before the signal's listener warning (at 11).
const LISTENER_CHECK_EVERY = 8;
/**
 * Controllers kept for the next runs, of any agent of the process: enough for a window of turns.
 * Not one per agent: an AbortSignal holds about 500 bytes (a hidden class of its own, its event
 * maps), a sixth of an idle crowd agent.
 */
const MAX_SPARES = 1_024;
const spares: AbortController[] = [];
let handedOn = 0;

/**
 * Whether a finished run's abort controller can serve another run. Node 20 makes AbortSignals
 * expensive (about 7 % of a run): a run that ended unaborted, with no listener left on its
 * signal, hands its controller on. `aborted`: whether the run aborted it (`RunHandles`);
 * `reuses` counts the controllers handed on so far.
 */
function reusable(controller: AbortController, aborted: boolean, reuses: number): boolean {
  if (aborted) return false;
  return reuses % LISTENER_CHECK_EVERY !== 0 || getEventListeners(controller.signal, 'abort').length === 0;
}

/** A controller for a new run: one a finished run handed on, else a new one. */
export function takeController(): AbortController {
  return spares.pop() ?? new AbortController();
}

/** Hands a finished run's controller on to the next run, when it can serve one (see `reusable`). */
export function handOn(controller: AbortController, aborted: boolean): void {
  if (spares.length < MAX_SPARES && reusable(controller, aborted, ++handedOn)) spares.push(controller);
}
