import { getEventListeners } from 'node:events';

// Counting listeners is slow in Node 20; a provider that leaves one behind is caught within a few
// runs, long before the signal's listener warning (at 11).
const LISTENER_CHECK_EVERY = 8;

/**
 * Whether a finished run's abort controller can serve the agent's next run. Node 20 makes
 * AbortSignals expensive (about 7 % of a run): a run that ended unaborted, with no listener left
 * on its signal, hands its controller on. `reuses` counts the controllers handed on so far.
 */
export function reusable(controller: AbortController, reuses: number): boolean {
  if (controller.signal.aborted) return false;
  return reuses % LISTENER_CHECK_EVERY !== 0 || getEventListeners(controller.signal, 'abort').length === 0;
}

// Controllers handed on between agents: a new agent's first run takes one instead of making a
// signal (about 4 µs each on Node 20, a sixth of a new agent's first run). Bounded: the agents
// that gave theirs take one back, and a crowd that runs all at once keeps its own spares.
const handedOn: AbortController[] = [];
const HANDED_ON_MAX = 32;

/** The controller for a new run: the agent's spare, else one a finished run handed on, else a new one. */
export function controllerFor(spare: AbortController | undefined): AbortController {
  return spare ?? handedOn.pop() ?? new AbortController();
}

/**
 * Hands a finished run's controller on, when it can serve another run: to any agent while few
 * are waiting (its listeners checked every time, since it may go to an agent that never saw it),
 * else back as the agent's spare. Returns the spare, if any.
 */
export function handOn(controller: AbortController, reuses: number): AbortController | undefined {
  if (handedOn.length < HANDED_ON_MAX) {
    if (!controller.signal.aborted && getEventListeners(controller.signal, 'abort').length === 0) handedOn.push(controller);
    return undefined;
  }
  return reusable(controller, reuses) ? controller : undefined;
}
