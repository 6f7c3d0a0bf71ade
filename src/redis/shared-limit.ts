import type { LimitFunction } from 'p-limit';
import { ConfigError } from '../errors.js';
import type { RedisLimiter } from './redis-limiter.js';

/**
 * A p-limit `LimitFunction` whose slots are those of `key` on a Redis limiter, shared with every
 * process using the same key: what a scene's `toolLimiter`, per-tool limiters and per-provider
 * model limiters can be swapped for. `concurrency` is the limit each acquire asks for.
 *
 * `activeCount` and `pendingCount` count this process's calls only (the others are not known
 * without a round trip), so a "free slot" read from them is a guess; the slot itself is not.
 * `clearQueue()` rejects this process's waiting calls with an `AbortError`, as p-limit's
 * `rejectOnClear` does. A call's release is sent without waiting for it: its result is not delayed
 * by a round trip, and the next acquire on the same limiter goes out after it on the same connection.
 */
export function sharedLimit(limiter: Pick<RedisLimiter, 'acquire'>, key: string, concurrency: number): LimitFunction {
  const check = (value: unknown): number => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new ConfigError(`sharedLimit("${key}"): concurrency must be a positive integer, got ${String(value)}`);
    }
    return value;
  };
  let limit = check(concurrency);
  let active = 0;
  let pending = 0;
  let clearing = new AbortController();

  const run = async <Arguments extends unknown[], Result>(
    fn: (...args: Arguments) => PromiseLike<Result> | Result,
    ...args: Arguments
  ): Promise<Result> => {
    pending++;
    let lease;
    try {
      lease = await limiter.acquire(key, limit, { signal: clearing.signal });
    } finally {
      pending--;
    }
    active++;
    try {
      return await fn(...args);
    } finally {
      active--;
      void lease.release();
    }
  };

  return Object.defineProperties(run, {
    // A task never starts at once here (its slot is a round trip away): see `RemoteLimit`.
    remote: { value: true },
    activeCount: { get: () => active },
    pendingCount: { get: () => pending },
    concurrency: {
      get: () => limit,
      set: (value: unknown) => void (limit = check(value)),
    },
    clearQueue: {
      value: () => {
        const previous = clearing;
        clearing = new AbortController();
        previous.abort(new DOMException('the queue was cleared', 'AbortError'));
      },
    },
    map: {
      value: <Input, Result>(iterable: Iterable<Input>, mapper: (input: Input, index: number) => PromiseLike<Result> | Result) =>
        Promise.all(Array.from(iterable, (input, index) => run(mapper, input, index))),
    },
  }) as LimitFunction;
}
