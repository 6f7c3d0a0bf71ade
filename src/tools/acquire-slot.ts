import pLimit, { type LimitFunction } from 'p-limit';
import type { StopScope, Stoppable } from './stop-scope.js';

/** Gives a held limiter slot back. Calling it twice is harmless. */
export type ReleaseSlot = () => void;

/**
 * Whether a task given to `limiter` now would start at once: a free slot and nobody queued
 * (queued tasks go first, so that no agent on a shared limiter starves).
 */
export function hasFreeSlot(limiter: LimitFunction | undefined): boolean {
  return limiter === undefined || (limiter.activeCount < limiter.concurrency && limiter.pendingCount === 0 && (limiter as Partial<RemoteLimit>).remote !== true);
}

/**
 * A limiter whose slots live in another process (Redis): a task given to it never starts at
 * once, since its slot is granted by a round trip, so `hasFreeSlot` never says yes for it.
 */
export type RemoteLimit = LimitFunction & { readonly remote: true };

/**
 * Holds a slot of `limiter` until `settled` settles. Called with a free slot (see `hasFreeSlot`),
 * p-limit counts the slot in `activeCount` synchronously, before any other code can look.
 */
export function holdSlot(limiter: LimitFunction | undefined, settled: Promise<unknown>): void {
  if (limiter === undefined) return;
  // `held` settles as `settled` does (or rejects when someone's `clearQueue` drops it); the
  // caller handles `settled`'s failure, so this copy of it must not surface as unhandled.
  limiter(passThrough, settled).catch(ignore);
}

// Shared by every held slot: p-limit passes `settled` as the argument, so no closure per call.
function passThrough(settled: Promise<unknown>): Promise<unknown> {
  return settled;
}

function ignore(): void {}

/**
 * Waits for a slot of a p-limit limiter, or for the dispatch to stop, whichever comes first.
 *
 * The slot is held until `release()` is called, so the limiter's `activeCount` counts exactly the
 * leases in use. When the dispatch stops the promise rejects at once with the stop's reason; the task
 * stays queued inside p-limit (it cannot be removed without `clearQueue`, which would also drop
 * other agents' tasks on a shared limiter) and, when it reaches the front of the queue, gives the slot back without
 * running anything.
 */
export function acquireSlot(limiter: LimitFunction, scope: StopScope): Promise<ReleaseSlot> {
  return new Promise<ReleaseSlot>((resolve, reject) => {
    if (scope.check()) {
      reject(scope.reason);
      return;
    }
    let settled = false;
    const waiter: Stoppable = {
      stop(reason) {
        if (settled) return;
        settled = true;
        reject(reason);
      },
    };
    scope.add(waiter);
    const task = (): Promise<void> =>
      new Promise<void>((release) => {
        scope.delete(waiter);
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
      scope.delete(waiter);
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}

/** Takes slots of several limiters in order (outermost first); releases them all on failure. */
export async function acquireSlots(limiters: readonly (LimitFunction | undefined)[], scope: StopScope): Promise<ReleaseSlot> {
  const held: ReleaseSlot[] = [];
  const releaseAll = (): void => {
    while (held.length > 0) held.pop()?.();
  };
  try {
    for (const limiter of limiters) if (limiter !== undefined) held.push(await acquireSlot(limiter, scope));
  } catch (error) {
    releaseAll();
    throw error;
  }
  return releaseAll;
}

/**
 * Per-tool limiters keyed by tool name, shared by the agents that should share a tool's limit;
 * `make`, when set, makes the limiter for a tool's own `concurrency` (a scene on workers shares it).
 */
export type ToolLimiters = Map<string, LimitFunction> & { make?: (tool: string, concurrency: number) => LimitFunction };

/**
 * Creates an empty per-tool limiter map. Pass one map to every agent that should share the
 * per-tool limits (`tool.concurrency`); the dispatcher adds a limiter the first time it meets a
 * tool with a `concurrency`.
 */
export function createToolLimiters(make?: (tool: string, concurrency: number) => LimitFunction): ToolLimiters {
  const limiters: ToolLimiters = new Map();
  if (make !== undefined) limiters.make = make;
  return limiters;
}

/**
 * The limiter for a tool: the one in the map (a scene's per-tool limit, or one made earlier), else
 * one made for the tool's `concurrency` on first use; undefined when it has neither.
 */
export function toolLimiter(limiters: ToolLimiters, name: string, concurrency: number | undefined): LimitFunction | undefined {
  // A limiter already in the map wins: a scene sets per-tool limits there for tools of any kind.
  const existing = limiters.size === 0 ? undefined : limiters.get(name);
  if (existing !== undefined || concurrency === undefined) return existing;
  const limiter = limiters.make?.(name, concurrency) ?? pLimit({ concurrency, rejectOnClear: true });
  limiters.set(name, limiter);
  return limiter;
}
