import pLimit, { type LimitFunction } from 'p-limit';

/** Gives a held limiter slot back. Calling it twice is harmless. */
export type ReleaseSlot = () => void;

/**
 * Waits for a slot of a p-limit limiter, or for `signal` to abort, whichever comes first.
 *
 * The slot is held until `release()` is called, so the limiter's `activeCount` counts exactly the
 * leases in use. On abort the promise rejects at once with the signal's reason; the task stays
 * queued inside p-limit (it cannot be removed without `clearQueue`, which would also drop other
 * agents' tasks on a shared limiter) and, when its turn comes, gives the slot back without
 * running anything.
 */
export function acquireSlot(limiter: LimitFunction, signal: AbortSignal): Promise<ReleaseSlot> {
  return new Promise<ReleaseSlot>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    let settled = false;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const task = (): Promise<void> =>
      new Promise<void>((release) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) {
          release(); // the caller gave up while queued: hand the slot straight on
          return;
        }
        settled = true;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          release();
        });
      });
    // A `clearQueue()` by someone else with `rejectOnClear` rejects the queued task.
    limiter(task).catch((error: unknown) => {
      signal.removeEventListener('abort', onAbort);
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}

/** Takes slots of several limiters in order (outermost first); releases them all on failure. */
export async function acquireSlots(limiters: readonly LimitFunction[], signal: AbortSignal): Promise<ReleaseSlot> {
  const held: ReleaseSlot[] = [];
  const releaseAll = (): void => {
    while (held.length > 0) held.pop()?.();
  };
  try {
    for (const limiter of limiters) held.push(await acquireSlot(limiter, signal));
  } catch (error) {
    releaseAll();
    throw error;
  }
  return releaseAll;
}

/** Per-tool limiters keyed by tool name, shared by the agents that should share a tool's limit. */
export type ToolLimiters = Map<string, LimitFunction>;

/**
 * Creates an empty per-tool limiter map. Pass one map to every agent that should share the
 * per-tool limits (`tool.concurrency`); the dispatcher adds a limiter the first time it meets a
 * tool with a `concurrency`.
 */
export function createToolLimiters(): ToolLimiters {
  return new Map();
}

/** The limiter for a tool with a `concurrency`, created on first use; undefined when it has none. */
export function toolLimiter(limiters: ToolLimiters, name: string, concurrency: number | undefined): LimitFunction | undefined {
  if (concurrency === undefined) return undefined;
  let limiter = limiters.get(name);
  if (limiter === undefined) {
    limiter = pLimit({ concurrency, rejectOnClear: true });
    limiters.set(name, limiter);
  }
  return limiter;
}
