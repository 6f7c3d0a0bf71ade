import { getEventListeners } from 'node:events';

// Counting listeners is slow in Node 20; a provider that leaves one behind is caught within a few
// runs, long before the signal's listener warning (at 11).
const LISTENER_CHECK_EVERY = 8;

/**
 * Whether a finished run's abort controller can serve the agent's next run. Node 20 makes
 * AbortSignals expensive (about 7 % of a run): a run that ended unaborted, with no listener left
 * on its signal, hands its controller on. `aborted`: whether the run aborted it (`RunHandles`);
 * `reuses` counts the controllers handed on so far.
 */
export function reusable(controller: AbortController, aborted: boolean, reuses: number): boolean {
  if (aborted) return false;
  return reuses % LISTENER_CHECK_EVERY !== 0 || getEventListeners(controller.signal, 'abort').length === 0;
}
