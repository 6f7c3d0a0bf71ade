import { getEventListeners } from 'node:events';

// Counting listeners is slow in Node 20; a provider that leaves one behind is caught within a few
// runs, long before the signal's listener warning (at 11).
const LISTENER_CHECK_EVERY = 8;

/**
 * Abort controllers for an agent's runs. Node 20 makes AbortSignals expensive (about 7 % of a
 * run): a run that ended unaborted, with no listener left on its signal, hands its controller to
 * the next run of the same agent.
 */
export class ControllerPool {
  private spare: AbortController | undefined;
  private reuses = 0;

  /** A controller for a new run: the last one kept, or a new one. */
  take(): AbortController {
    const controller = this.spare ?? new AbortController();
    this.spare = undefined;
    return controller;
  }

  /** Keeps a finished run's controller for the next run, when it is still clean. */
  keep(controller: AbortController): void {
    if (controller.signal.aborted) return;
    if (++this.reuses % LISTENER_CHECK_EVERY === 0 && getEventListeners(controller.signal, 'abort').length > 0) return;
    this.spare = controller;
  }
}
