import { describeThrown, type Bus, type EventFilter, type Unsubscribe } from './bus.js';
import { createEventQueue, type Backpressure, type BackpressurePolicy } from './event-queue.js';
import type { Envelope, EnvelopeOf, Pattern } from './events.js';

export { createEventQueue, resolveBackpressure, SAMPLED_TYPES, POLICIES } from './event-queue.js';
export type { Backpressure, BackpressurePolicy, EventQueue, PushOutcome, Taken } from './event-queue.js';

/** What a buffered handler is told with each event. */
export type Delivery = {
  /** Events dropped by the policy (`drop-oldest`, `sample`) since the previous delivery. */
  dropped: number;
  /** Published events this one stands for: more than 1 when `coalesce` merged streamed text. */
  merged: number;
};

/** A handler that may take its time: the next event waits until its promise settles. */
export type BufferedHandler<TEvent = Envelope> = (event: TEvent, delivery: Delivery) => void | PromiseLike<void>;

/** Why a bounded queue gave up on its subscriber. */
export type Overflow = { policy: BackpressurePolicy; max: number };

/** The hooks of a buffered delivery, besides its policy. */
export type DeliveryHooks = {
  /**
   * Called once when an `all`, `coalesce` or `sample` queue passes its `max`: the delivery has
   * stopped and forgotten what waited. The inspector drops the client here.
   */
  onOverflow?: (overflow: Overflow) => void;
  /** A handler threw or rejected; delivery goes on with the next event. */
  onError?: (error: unknown, event: Envelope) => void;
};

/** A queue plus the loop that feeds its handler, one event at a time. */
export type BufferedDelivery = {
  /** Queues an event (see `EventQueue.push` for `counted`); ignored once stopped. */
  push(event: Envelope, options?: { counted?: boolean }): void;
  /** Stops delivering and forgets what waits. Calling it twice is harmless. */
  stop(): void;
  /** Events waiting. */
  readonly pending: number;
  /** Events dropped by the policy so far. */
  readonly dropped: number;
  /** True after `stop()` or an overflow. */
  readonly stopped: boolean;
  /** Resolves when nothing waits and the handler is not running (at once if so now). */
  idle(): Promise<void>;
};

/**
 * The delivery loop behind `subscribeBuffered` and the inspector's SSE clients. Events are handed
 * to `handler` in order, one at a time, never during `push` (delivery starts in a microtask), so
 * a burst published in one go reaches the queue whole and the policy can merge or drop in it. The
 * publisher never waits for the handler.
 */
export function createBufferedDelivery(handler: BufferedHandler, options: Backpressure & DeliveryHooks): BufferedDelivery {
  const queue = createEventQueue(options);
  let stopped = false;
  let running = false;
  let idleWaiters: (() => void)[] = [];

  const settle = (): void => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };
  const drain = async (): Promise<void> => {
    try {
      for (let taken = queue.take(); taken !== undefined && !stopped; taken = queue.take()) {
        try {
          const result = handler(taken.event, { dropped: taken.dropped, merged: taken.merged });
          if (result !== undefined && typeof (result as PromiseLike<void>).then === 'function') await result;
        } catch (error) {
          options.onError?.(error, taken.event);
        }
      }
    } finally {
      running = false;
      settle();
    }
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    queue.clear();
    if (!running) settle();
  };

  return {
    push(event, pushOptions) {
      if (stopped) return;
      if (queue.push(event, pushOptions) === 'overflow') {
        stop();
        options.onOverflow?.({ policy: queue.policy, max: queue.max });
        return;
      }
      if (!running) {
        running = true;
        queueMicrotask(() => void drain());
      }
    },
    stop,
    get pending() {
      return queue.size;
    },
    get dropped() {
      return queue.dropped;
    },
    get stopped() {
      return stopped;
    },
    idle() {
      if (!running) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}

/** `subscribeBuffered`'s options: a policy, an optional agent/scene filter, and the hooks. */
export type BufferedOptions = Backpressure & EventFilter & DeliveryHooks;

/** A buffered subscription. */
export type BufferedSubscription = {
  /** Unsubscribes and forgets what waits. Calling it twice is harmless. */
  stop: Unsubscribe;
  readonly pending: number;
  readonly dropped: number;
  /** True after `stop()` or an overflow. */
  readonly stopped: boolean;
  /** Resolves once everything published so far has been handled (or dropped). */
  idle(): Promise<void>;
};

/**
 * Subscribes a slow or async handler behind a bounded queue, so it never slows the publisher:
 * `bus.on` for panels, bridges and sinks. The handler gets events in order, one at a time (the
 * next waits for its promise), with how many the policy dropped or merged. Plain `bus.on`
 * subscribers are untouched: this is a `bus.on('*')` listener that only pushes to a queue.
 *
 * A handler that throws or rejects is reported as `bus.error` (and to `onError`), like any
 * subscriber; an overflowing queue unsubscribes and calls `onOverflow`.
 *
 * @example
 * const panel = subscribeBuffered(bus, 'llm.*', async (event, { dropped }) => {
 *   if (dropped > 0) await view.note(`${dropped} events skipped`);
 *   await view.render(event);
 * }, { policy: 'coalesce', max: 5_000, agent: 'referee' });
 * panel.stop();
 */
export function subscribeBuffered<P extends Pattern>(
  bus: Bus,
  pattern: P,
  handler: BufferedHandler<EnvelopeOf<P>>,
  options: BufferedOptions,
): BufferedSubscription {
  let unsubscribe: Unsubscribe = () => undefined;
  const delivery = createBufferedDelivery(handler as BufferedHandler, {
    ...options,
    onOverflow: (overflow) => {
      unsubscribe();
      options.onOverflow?.(overflow);
    },
    onError: (error, event) => {
      options.onError?.(error, event);
      // Reporting an error in a `bus.error` handler would feed it another one, forever.
      if (event.type === 'bus.error') return;
      bus.publish('bus.error', { eventType: event.type, eventId: event.id, message: describeThrown(error) }, { agent: event.agent, scene: event.scene, cause: event.id });
    },
  });
  const filter: EventFilter = {};
  if (options.agent !== undefined) filter.agent = options.agent;
  if (options.scene !== undefined) filter.scene = options.scene;
  unsubscribe = bus.on(pattern, (event) => delivery.push(event as Envelope), filter);
  return {
    stop() {
      unsubscribe();
      delivery.stop();
    },
    get pending() {
      return delivery.pending;
    },
    get dropped() {
      return delivery.dropped;
    },
    get stopped() {
      return delivery.stopped;
    },
    idle: () => delivery.idle(),
  };
}
