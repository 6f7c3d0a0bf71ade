import type { Bus, Unsubscribe } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import { ConfigError } from '../errors.js';
import { createAgentTally, type AgentSummary } from './agent-tally.js';

/** What came after an event id: the events to replay, and whether the id was found. */
export type HistorySlice = {
  events: Envelope[];
  /**
   * False when an id was asked for but is no longer held (or never was): `events` is then
   * everything held, and the client has missed something.
   */
  found: boolean;
  /**
   * When `found` is false, how many events came between the id asked for and the oldest held
   * one, if the ids tell (the default ids are `<run>-<counter>`); else null.
   */
  missed: number | null;
};

/**
 * The last events of a bus (or all of a log), in order, for the inspector to replay: a client that
 * reconnects with `Last-Event-ID` gets exactly what it missed. Keep one history per bus and give
 * it to every inspector server on that bus: a restarted server then resumes its clients without a
 * gap or a duplicate.
 */
export type EventHistory = {
  /** How many events it holds at most. */
  readonly capacity: number;
  /** Events held now. */
  readonly length: number;
  /** Events seen in all, held or evicted. */
  readonly total: number;
  /** Events seen but no longer held: `total - length`. A page that opens now cannot get them. */
  readonly evicted: number;
  /** True while it records a bus; false for a log's events or after `detach()`. */
  readonly live: boolean;
  /** The held events after `id` (all held events when `id` is undefined). */
  after(id: string | undefined): HistorySlice;
  /** Every held event, oldest first. */
  events(): Envelope[];
  /**
   * Each agent as the evicted events tell it (state, turns, counts): what a page that gets only
   * the held events must start from to show the whole run. Empty while nothing was evicted.
   */
  earlier(): AgentSummary[];
  /** Each agent as every event seen tells it, evicted or held. */
  agents(): AgentSummary[];
  /** Calls `listener` with each new event once it is held. Returns the unsubscribe. */
  subscribe(listener: (event: Envelope) => void): Unsubscribe;
  /** Stops recording the bus; held events stay readable. */
  detach(): void;
};

/** Events a history holds when not told otherwise. */
export const DEFAULT_HISTORY_SIZE = 10_000;

export type EventHistoryOptions = {
  /** Events held at most; older ones are evicted (default 10,000 for a bus, every event of a log). */
  size?: number;
};

/**
 * Creates a history: a ring buffer that records every event of `source` from now on, or holds the
 * events of a log (`readLog(path).events`). Envelopes are held by reference, not copied.
 *
 * @example
 * const history = createEventHistory(scene.bus, { size: 50_000 });
 * let inspector = await startInspector({ bus: scene.bus, history, port: 4000 });
 * await inspector.close();
 * inspector = await startInspector({ bus: scene.bus, history, port: 4000 }); // clients resume
 */
export function createEventHistory(source: Bus | Iterable<Envelope>, options: EventHistoryOptions = {}): EventHistory {
  const fromBus = isBus(source);
  const logged = fromBus ? [] : [...source];
  const capacity = options.size ?? (fromBus ? DEFAULT_HISTORY_SIZE : Math.max(1, logged.length));
  if (!Number.isSafeInteger(capacity) || capacity < 1) throw new ConfigError(`createEventHistory: size must be a positive integer, got ${String(options.size)}`);

  // Slot of sequence number `seq` (1-based, counting every event seen) is `seq % capacity`.
  const ring: (Envelope | undefined)[] = new Array<Envelope | undefined>(Math.min(capacity, 1024));
  const listeners = new Set<(event: Envelope) => void>();
  // What the events pushed out of the ring said of each agent, folded as they go.
  const evictedTally = createAgentTally();
  let total = 0;

  const oldestSeq = (): number => Math.max(1, total - capacity + 1);
  const slot = (seq: number): number => seq % capacity;
  const hold = (event: Envelope): void => {
    const seq = ++total;
    const index = slot(seq);
    if (index >= ring.length) ring.length = Math.min(capacity, Math.max(index + 1, ring.length * 2));
    if (seq > capacity) evictedTally.apply(ring[index]!);
    ring[index] = event;
  };
  /**
   * The sequence number of the newest held event with this id. A scan, not an index: resumes are
   * rare and recording is not (a map of ids cost more than the bus itself per event). Newest
   * first, so an id a log repeats (a hand-edited or merged log) resumes from its latest position.
   */
  const seqOf = (id: string): number | undefined => {
    for (let seq = total, oldest = oldestSeq(); seq >= oldest; seq--) if (ring[slot(seq)]!.id === id) return seq;
    return undefined;
  };
  const range = (fromSeq: number): Envelope[] => {
    const out: Envelope[] = [];
    for (let seq = Math.max(fromSeq, oldestSeq()); seq <= total; seq++) out.push(ring[slot(seq)]!);
    return out;
  };

  for (const event of logged) hold(event);
  let unsubscribe: Unsubscribe | undefined = fromBus
    ? source.on('*', (event) => {
        hold(event);
        // One listener's failure must not starve the others; the bus reports the first as bus.error.
        let failure: { error: unknown } | undefined;
        for (const listener of listeners) {
          try {
            listener(event);
          } catch (error) {
            failure ??= { error };
          }
        }
        if (failure !== undefined) throw failure.error;
      })
    : undefined;

  return {
    capacity,
    get length() {
      return Math.min(total, capacity);
    },
    get total() {
      return total;
    },
    get evicted() {
      return Math.max(0, total - capacity);
    },
    get live() {
      return unsubscribe !== undefined;
    },
    after(id) {
      if (id === undefined) return { events: range(1), found: true, missed: null };
      const seq = total === 0 ? undefined : seqOf(id);
      if (seq !== undefined) return { events: range(seq + 1), found: true, missed: null };
      const oldest = total === 0 ? undefined : ring[slot(oldestSeq())];
      return { events: range(1), found: false, missed: countBetween(id, oldest?.id) };
    },
    events: () => range(1),
    earlier: () => evictedTally.list(),
    agents() {
      const all = evictedTally.clone();
      for (const event of range(1)) all.apply(event);
      return all.list();
    },
    subscribe(listener) {
      // A copy per subscription: the same listener twice gets events twice, like `bus.on`.
      const own = (event: Envelope): void => listener(event);
      listeners.add(own);
      return () => void listeners.delete(own);
    },
    detach() {
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}

/**
 * Events between two ids of one bus, counted from the ids themselves: both `<run>-<n>` with the
 * same run, the first older. Anything else (another run's id, custom ids) is not countable.
 */
function countBetween(asked: string, oldest: string | undefined): number | null {
  if (oldest === undefined) return null;
  const a = COUNTED_ID.exec(asked);
  const b = COUNTED_ID.exec(oldest);
  if (a === null || b === null || a[1] !== b[1]) return null;
  const gap = Number(b[2]) - Number(a[2]) - 1;
  return Number.isSafeInteger(gap) && gap >= 0 ? gap : null;
}

const COUNTED_ID = /^(.*)-(\d{1,15})$/;

function isBus(source: Bus | Iterable<Envelope>): source is Bus {
  return typeof (source as Bus).on === 'function' && typeof (source as Bus).publish === 'function';
}
