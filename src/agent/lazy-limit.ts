import pLimit, { type LimitFunction } from 'p-limit';

/** The limit function with the p-limit it stands for, made at the first task. */
type LazyLimit = LimitFunction & { made: LimitFunction | undefined; readonly size: number };

function made(limit: LazyLimit): LimitFunction {
  return (limit.made ??= pLimit({ concurrency: limit.size, rejectOnClear: true }));
}

// Until a task comes, the counts are those of an idle limiter; what reads or changes it makes it.
const LAZY: object = Object.create(Function.prototype, {
  activeCount: {
    get(this: LazyLimit) {
      return this.made === undefined ? 0 : this.made.activeCount;
    },
  },
  pendingCount: {
    get(this: LazyLimit) {
      return this.made === undefined ? 0 : this.made.pendingCount;
    },
  },
  concurrency: {
    get(this: LazyLimit) {
      return this.made === undefined ? this.size : this.made.concurrency;
    },
    set(this: LazyLimit, value: number) {
      made(this).concurrency = value;
    },
  },
  clearQueue: {
    value(this: LazyLimit) {
      this.made?.clearQueue();
    },
  },
  map: {
    value(this: LazyLimit, iterable: Iterable<unknown>, mapper: (input: unknown, index: number) => unknown) {
      return made(this).map(iterable, mapper);
    },
  },
});

/**
 * An agent's own tool limiter (`concurrency`, `rejectOnClear`), a p-limit made at its first task.
 * A call that answers at once never takes a slot, so an agent whose tools all answer at once
 * never needs one; making it cost a queue, five closures and a dictionary of properties per agent.
 */
export function lazyLimit(concurrency: number): LimitFunction {
  const limit = ((task: (...args: unknown[]) => unknown, ...args: unknown[]) => made(limit)(task, ...args)) as LazyLimit;
  Object.setPrototypeOf(limit, LAZY);
  limit.made = undefined;
  (limit as { size: number }).size = concurrency;
  return limit;
}
