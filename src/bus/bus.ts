import mittModule, { type Emitter } from 'mitt';
import type { Envelope, EnvelopeOf, EventType, Pattern, TroupeEvents } from './events.js';
import { randomIds, type Clock, type IdSource } from './ids.js';

/** Where an event came from and what led to it; all optional. */
export type EventMeta = { agent?: string; scene?: string; cause?: string };

/** Narrows a subscription to one agent and/or one scene. */
export type EventFilter = { agent?: string; scene?: string };

/** Publishes one event on someone's behalf: an agent binds its name, scene and cause. */
export type Publish = <K extends EventType>(type: K, data: TroupeEvents[K]) => Envelope<K>;

/** Stops a subscription. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/** The typed event bus every part of troupe talks over; its catalogue is in docs/bus.md. */
export type Bus = {
  /** Publishes one event and returns its envelope (its `id` is the `cause` of what follows). */
  publish<K extends EventType>(type: K, data: TroupeEvents[K], meta?: EventMeta): Envelope<K>;
  /** Subscribes by exact type, `'prefix.*'` or `'*'`, optionally for one agent or scene. */
  on<P extends Pattern>(pattern: P, handler: (event: EnvelopeOf<P>) => void, filter?: EventFilter): Unsubscribe;
  /** Like `on`, but for the first matching event only. */
  once<P extends Pattern>(pattern: P, handler: (event: EnvelopeOf<P>) => void, filter?: EventFilter): Unsubscribe;
  /** True when at least one subscriber listens (lets hot paths skip building costly data). */
  readonly hasSubscribers: boolean;
  readonly ids: IdSource;
  readonly clock: Clock;
};

export type BusOptions = {
  /** Envelope ids (default: random prefix + counter). */
  ids?: IdSource;
  /** Envelope timestamps (default: `Date.now`). */
  clock?: Clock;
  /**
   * Sees every envelope as it is made, before any subscriber does (a subscriber that publishes
   * in turn cannot get ahead of it): how a resume checks each event against its log. Throwing
   * from it stops the publish.
   */
  tap?: (event: Envelope) => void;
  /**
   * Called when a subscriber throws, after `bus.error` is published. Default: nothing more; a
   * subscriber of `bus.error` that throws itself is reported here only, to avoid a loop.
   */
  onSubscriberError?: (error: unknown, event: Envelope) => void;
};

type Listener = (event: Envelope) => void;
type Channels = Record<string, Envelope>;

const ALL = '**';

// mitt's typings are CommonJS-flavoured: under NodeNext the default import types as the module
// object, while at run time the ESM build hands us the function itself.
type MittFactory = typeof mittModule.default;
const mitt: MittFactory =
  (mittModule as unknown as { default?: MittFactory }).default ?? (mittModule as unknown as MittFactory);

/**
 * The channel keys an event of `type` is emitted on: its own, each `prefix.*` and `**`. The same
 * for every bus, so one cache serves them all (a crowd makes a bus per agent).
 */
const channelsOf = new Map<string, readonly string[]>();
function channels(type: string): readonly string[] {
  let keys = channelsOf.get(type);
  if (keys === undefined) {
    const list = [type];
    for (let dot = type.lastIndexOf('.'); dot > 0; dot = type.lastIndexOf('.', dot - 1)) list.push(`${type.slice(0, dot)}.*`);
    list.push(ALL);
    keys = Object.freeze(list);
    // Event types are few (the catalogue, plus what hosts emit): a bound keeps a host that makes up types from growing it forever.
    if (channelsOf.size < 10_000) channelsOf.set(type, keys);
  }
  return keys;
}

/**
 * Creates a bus. Subscribers that throw never stop delivery to the others nor the publisher:
 * the error is published as `bus.error`.
 *
 * @example
 * const bus = createBus();
 * const stop = bus.on('tool.*', (event) => console.log(event.type, event.data.name));
 * bus.publish('tool.started', { callId: 'c1', name: 'lookup', args: {}, attempt: 1 });
 * stop();
 */
export function createBus(options?: BusOptions): Bus {
  return new EventBus(options);
}

/**
 * A class, so that `hasSubscribers` and the bookkeeping live on the prototype: a bus of closures
 * made six functions per bus, and its own getter kept its properties in a dictionary. A crowd
 * makes a bus per agent.
 */
class EventBus implements Bus {
  // Own functions bound to this bus, not prototype methods: `const { publish } = bus` and
  // `{ ...bus }` go on working, as they did with a bus of closures.
  readonly publish: Bus['publish'] = (type, data, meta) => this.send(type, data, meta);
  readonly on: Bus['on'] = (pattern, handler, filter) => this.subscribe(pattern === '*' ? ALL : pattern, handler as Listener, filter, false);
  readonly once: Bus['once'] = (pattern, handler, filter) => this.subscribe(pattern === '*' ? ALL : pattern, handler as Listener, filter, true);
  readonly ids: IdSource;
  readonly clock: Clock;
  private readonly tap: ((event: Envelope) => void) | undefined;
  private readonly options: BusOptions | undefined;
  // mitt does the bookkeeping; every channel key gets the envelope. Wildcards are our own keys
  // (`tool.*`, `**`): mitt's own `*` would fire again on every prefix channel, with other
  // arguments. Made at the first subscription: many agents' own buses never have one.
  private emitter: Emitter<Channels> | undefined;
  /**
   * Per event type, the handler lists of its channels (`undefined` where a channel has none),
   * looked up once: four map lookups an event became one. Dropped at every subscription and
   * unsubscription (a new channel gets a new list); mitt changes the lists themselves in place,
   * which the entries share. Made at the first delivery: most agents' own buses never deliver one.
   */
  private routes: Map<string, readonly (Listener[] | undefined)[]> | undefined;
  /** Counts subscriptions and unsubscriptions: a delivery notices one made by a handler. */
  private changes = 0;
  private subscriberCount = 0;
  private reporting = false;

  constructor(options: BusOptions | undefined) {
    this.ids = options?.ids ?? randomIds();
    this.clock = options?.clock ?? Date.now;
    this.tap = options?.tap;
    this.options = options;
  }

  private send<K extends EventType>(type: K, data: TroupeEvents[K], meta: EventMeta | undefined): Envelope<K> {
    // One shape for every envelope, absent fields included as `undefined` (JSON drops them):
    // adding them one by one would allocate and change the object's shape per event.
    // Called as plain functions, as they always were: a source or clock never gets the bus as `this`.
    const { ids, clock, tap } = this;
    const event = {
      id: ids(),
      type,
      at: clock(),
      scene: meta?.scene,
      agent: meta?.agent,
      cause: meta?.cause,
      data,
    } as Envelope<K>;
    tap?.(event as Envelope);
    if (this.subscriberCount > 0) {
      const lists = this.routes?.get(type) ?? this.route(type);
      const changes = this.changes;
      for (let index = 0; index < lists.length; index++) {
        deliver(lists[index], event as Envelope);
        // A handler subscribed or unsubscribed: the channels still to come are looked up again,
        // as they were before routes were kept (a new channel's handlers get this event).
        if (this.changes !== changes) {
          this.deliverRest(type, index + 1, event as Envelope);
          break;
        }
      }
    }
    return event;
  }

  /** Delivers `event` to the channels of `type` from `from` on, looking each up as it comes. */
  private deliverRest(type: string, from: number, event: Envelope): void {
    const all = this.emitter!.all;
    const keys = channels(type);
    for (let index = from; index < keys.length; index++) deliver(all.get(keys[index]!) as Listener[] | undefined, event);
  }

  /** The handler lists an event of `type` goes to (its own channel's, each `prefix.*`'s, `**`'s), kept in `routes`. */
  private route(type: string): readonly (Listener[] | undefined)[] {
    const all = this.emitter!.all;
    const lists = channels(type).map((key) => all.get(key) as Listener[] | undefined);
    const routes = (this.routes ??= new Map());
    // Like `channelsOf`: a host that makes up event types must not grow it forever.
    if (routes.size < 10_000) routes.set(type, lists);
    return lists;
  }

  get hasSubscribers(): boolean {
    return this.subscriberCount > 0;
  }

  private subscribe(pattern: string, handler: Listener, filter: EventFilter | undefined, once: boolean): Unsubscribe {
    const emitter = (this.emitter ??= mitt<Channels>());
    let active = true;
    const listener: Listener = (event) => {
      if (!active) return;
      if (filter?.agent !== undefined && event.agent !== filter.agent) return;
      if (filter?.scene !== undefined && event.scene !== filter.scene) return;
      if (once) stop();
      try {
        handler(event);
      } catch (error) {
        this.report(error, event);
      }
    };
    const stop = (): void => {
      if (!active) return;
      active = false;
      this.subscriberCount--;
      emitter.off(pattern, listener);
      this.routes = undefined;
      this.changes++;
    };
    this.subscriberCount++;
    emitter.on(pattern, listener);
    this.routes = undefined;
    this.changes++;
    return stop;
  }

  private report(error: unknown, event: Envelope): void {
    this.options?.onSubscriberError?.(error, event);
    if (this.reporting || event.type === 'bus.error') return;
    this.reporting = true;
    try {
      this.send(
        'bus.error',
        { eventType: event.type, eventId: event.id, message: describeThrown(error) },
        { agent: event.agent, scene: event.scene, cause: event.id },
      );
    } finally {
      this.reporting = false;
    }
  }
}

/**
 * Calls a channel's handlers. mitt's own `emit` copies the list twice per call (`slice().map`);
 * one handler needs no copy, and several are copied once so that a handler unsubscribing (or
 * subscribing) during delivery changes nothing for this event.
 */
function deliver(handlers: Listener[] | undefined, event: Envelope): void {
  if (handlers === undefined || handlers.length === 0) return;
  if (handlers.length === 1) {
    handlers[0]!(event);
    return;
  }
  for (const handler of handlers.slice()) handler(event);
}

/** What a subscriber threw, as `bus.error` says it: never throws itself. */
export function describeThrown(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return `non-Error thrown: ${String(error)}`;
  } catch {
    return 'non-Error thrown (unprintable)';
  }
}

/**
 * Hands every envelope `bus` publishes to `record`, as a session log or a Redis bridge attaches,
 * and keeps the subscription in `attachments` (the owner stops them all when it closes). Only
 * envelopes: a bus on mitt's own `'*'` key would also hand wildcard listeners the channel name.
 * Returns the subscription's stop, which also forgets it.
 */
export function attachRecorder(bus: Bus, record: (event: Envelope) => unknown, attachments: Set<Unsubscribe>): Unsubscribe {
  const stop = bus.on('*', (event) => {
    if (typeof event === 'object' && event !== null) record(event);
  });
  attachments.add(stop);
  return () => {
    stop();
    attachments.delete(stop);
  };
}
