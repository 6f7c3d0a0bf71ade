import type { Bus } from '../../bus/bus.js';
import type { Envelope, EventType } from '../../bus/events.js';
import { createEventWriter } from '../../record/plain-json.js';
import { createRedactor } from '../../record/redact.js';

/** Envelope ids remembered (at least half as many, at most this many) to map a cause back to the id its event has in the stream. */
const MAX_ORIGINS = 100_000;
/** Characters of one event's JSON in the stream, as the bridge's default. */
const MAX_EVENT_CHARS = 1024 * 1024;

/**
 * A process's side of the scene's events stream. Outbound, it keeps what the agents this process
 * runs publish during a tick, by partition, until the partition's commit sends them. Inbound, it
 * publishes other processes' events on the local bus, so that speech, triggers and subscriptions
 * wake agents here as they would in one process; those are never sent again.
 */
export class EventRelay {
  /** Partition → its events as stream entries (serialized as they come: a tick of a large cast holds millions). */
  private readonly buckets = new Map<number, string[]>();
  /** Partition → those of its events that may wake an agent, kept whole for `peek`. */
  private readonly waking = new Map<number, Envelope[]>();
  private route: ((agent: string) => number | undefined) | undefined;
  private injecting = false;
  /**
   * Local id of an event published from the stream → its id in the stream, in two generations:
   * the older is dropped whole when the newer fills. Evicting the oldest entry of one map one at
   * a time makes V8 skip every deleted slot on each eviction (27 µs at 100,000 entries).
   */
  private origins = new Map<string, string>();
  private olderOrigins = new Map<string, string>();
  private readonly write = createEventWriter(createRedactor({ secrets: [] }), MAX_EVENT_CHARS);
  private readonly bus: Bus;
  private readonly mayWake: (event: Envelope) => boolean;

  /**
   * `everything`: keep every event (the coordinator's), not only those of routed agents.
   * `mayWake`: which events `peek` must give (default: none; the coordinator never asks).
   */
  constructor(bus: Bus, everything = false, mayWake: (event: Envelope) => boolean = () => false) {
    this.bus = bus;
    this.mayWake = mayWake;
    bus.on('*', (event) => {
      if (this.injecting) return;
      if (everything) return void this.keep(-1, event);
      if (this.route === undefined || event.agent === undefined) return;
      const partition = this.route(event.agent);
      if (partition !== undefined) this.keep(partition, event);
    });
  }

  /** From now on, events of the agents `route` places in a partition are kept for it. */
  capture(route: (agent: string) => number | undefined): void {
    this.route = route;
  }

  /** Stops keeping events (the tick's turns have settled). */
  release(): void {
    this.route = undefined;
  }

  /** The events kept for `partition` (-1: all, for a relay of everything) that may wake an agent, not yet taken. */
  peek(partition: number): readonly Envelope[] {
    return this.waking.get(partition) ?? [];
  }

  /** The events kept for `partition` (-1: all, for a relay of everything), as stream entries; forgets them. */
  take(partition: number): string[] {
    const events = this.buckets.get(partition) ?? [];
    this.buckets.delete(partition);
    this.waking.delete(partition);
    return events;
  }

  /** Publishes an event of another process (an entry's JSON) on the local bus. */
  inject(text: string): void {
    let event: Envelope & { v?: unknown };
    try {
      event = JSON.parse(text) as Envelope & { v?: unknown };
    } catch {
      return;
    }
    this.injecting = true;
    try {
      const local = this.bus.publish(event.type as EventType, event.data as never, { agent: event.agent, scene: event.scene, cause: event.cause });
      if (this.origins.size >= MAX_ORIGINS / 2) {
        this.olderOrigins = this.origins;
        this.origins = new Map();
      }
      this.origins.set(local.id, event.id);
    } finally {
      this.injecting = false;
    }
  }

  private keep(partition: number, event: Envelope): void {
    let texts = this.buckets.get(partition);
    if (texts === undefined) this.buckets.set(partition, (texts = []));
    // A cause that came from another process is named by its id in the stream.
    const origin = event.cause === undefined ? undefined : (this.origins.get(event.cause) ?? this.olderOrigins.get(event.cause));
    texts.push(this.write(origin === undefined ? event : { ...event, cause: origin }));
    if (!this.mayWake(event)) return;
    let waking = this.waking.get(partition);
    if (waking === undefined) this.waking.set(partition, (waking = []));
    waking.push(event);
  }
}
