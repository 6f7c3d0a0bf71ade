/**
 * An unbounded first-in first-out queue between a producer that must never wait (the agent,
 * publishing synchronously) and one consumer that pulls at its own pace. It holds at most one
 * run's events; a consumer that stops early (`return`) drops them and calls `onCancel`.
 */
export class EventBuffer<T> {
  /** Called once when the consumer stops before the end. */
  onCancel: (() => void) | undefined;
  private items: (T | undefined)[] = [];
  private head = 0;
  private ended = false;
  private cancelled = false;
  private waiting: ((result: IteratorResult<T>) => void) | undefined;

  push(item: T): void {
    if (this.cancelled || this.ended) return;
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      waiting({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  end(): void {
    this.ended = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  iterator(): AsyncIterator<T> {
    return {
      next: () => this.next(),
      return: () => {
        this.cancel();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private next(): Promise<IteratorResult<T>> {
    if (this.head < this.items.length) {
      const item = this.items[this.head] as T;
      this.items[this.head++] = undefined;
      if (this.head === this.items.length) {
        this.items = [];
        this.head = 0;
      }
      return Promise.resolve({ value: item, done: false });
    }
    if (this.ended || this.cancelled) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  private cancel(): void {
    if (this.cancelled) return;
    const early = !this.ended || this.head < this.items.length;
    this.cancelled = true;
    this.items = [];
    this.head = 0;
    this.end();
    if (early) this.onCancel?.();
  }
}
