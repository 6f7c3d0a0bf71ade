/**
 * Counters a dispatcher keeps about calls that did not end cleanly. Create one per agent (or one
 * per scene to add them up) and pass it as `DispatchOptions.stats`; read it at any time.
 */
export type DispatchStats = {
  /** Attempts whose tool kept running after its signal aborted (each counted once). */
  zombies: number;
  /** Zombies reported `pending` that have not settled yet. */
  zombiesRunning: number;
  /** Late results of zombies, published as `tool.zombie` and discarded. */
  lateResultsDiscarded: number;
  /** Attempts that hit their `timeoutMs`. */
  timeouts: number;
  /** Attempts made after a retryable failure. */
  retries: number;
};

/** Fresh counters, all zero. */
export function createDispatchStats(): DispatchStats {
  return { zombies: 0, zombiesRunning: 0, lateResultsDiscarded: 0, timeouts: 0, retries: 0 };
}
