import { overlaps, type PathKeys } from './world-path.js';

type Waiter = { keys: PathKeys; grant: (release: () => void) => void; reject: (reason: unknown) => void; signal?: AbortSignal; onAbort?: () => void };

/**
 * Exclusive locks on world paths. A lock on `market.stock` excludes locks on `market`,
 * `market.stock` and `market.stock.ale`, but not on `market.prices`. Waiters are served first come,
 * first served among those that overlap, so no writer starves; disjoint paths never wait for each
 * other.
 */
export class PathLocks {
  private readonly held: PathKeys[] = [];
  private readonly waiting: Waiter[] = [];

  /** Whether a lock overlapping `keys` is held (a plain write there would break an update). */
  isLocked(keys: PathKeys): boolean {
    return this.held.some((other) => overlaps(other, keys));
  }

  /** Resolves with a release function once `keys` is free; rejects if `signal` aborts first. */
  acquire(keys: PathKeys, signal?: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const waiter: Waiter = { keys, grant: resolve, reject, ...(signal !== undefined && { signal }) };
      if (signal !== undefined) {
        waiter.onAbort = () => {
          const index = this.waiting.indexOf(waiter);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(signal.reason);
          this.pump();
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiting.push(waiter);
      this.pump();
    });
  }

  private pump(): void {
    const blocked: PathKeys[] = [];
    for (let index = 0; index < this.waiting.length; ) {
      const waiter = this.waiting[index]!;
      const free = !this.isLocked(waiter.keys) && !blocked.some((keys) => overlaps(keys, waiter.keys));
      if (!free) {
        // Later waiters on an overlapping path queue behind this one.
        blocked.push(waiter.keys);
        index++;
        continue;
      }
      this.waiting.splice(index, 1);
      if (waiter.onAbort !== undefined) waiter.signal!.removeEventListener('abort', waiter.onAbort);
      this.held.push(waiter.keys);
      let released = false;
      waiter.grant(() => {
        if (released) return;
        released = true;
        this.held.splice(this.held.indexOf(waiter.keys), 1);
        this.pump();
      });
    }
  }
}
