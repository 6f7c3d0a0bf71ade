import type { Bus, EventFilter } from '../bus/bus.js';
import type { Envelope, EventType, Pattern } from '../bus/events.js';

/** The events a bus carried, in order, with the lookups tests need. */
export type EventRecord = {
  readonly all: readonly Envelope[];
  /** The types in order, e.g. to compare a run's sequence. */
  types(): EventType[];
  /** The first event of a type. */
  find<K extends EventType>(type: K): Envelope<K> | undefined;
  /** Every event of a type. */
  filter<K extends EventType>(type: K): Envelope<K>[];
  /** Forgets what was recorded so far. */
  clear(): void;
  /** Stops recording. */
  stop(): void;
};

/**
 * Records every event on a bus (or those a pattern and filter select).
 *
 * @example
 * const events = recordEvents(agent.bus);
 * await agent.run('hi');
 * expect(events.types()).toContain('agent.finished');
 */
export function recordEvents(bus: Bus, pattern: Pattern = '*', filter?: EventFilter): EventRecord {
  const all: Envelope[] = [];
  const stop = bus.on(pattern, (event) => void all.push(event as Envelope), filter);
  return {
    all,
    types: () => all.map((event) => event.type),
    find: <K extends EventType>(type: K) => all.find((event) => event.type === type) as Envelope<K> | undefined,
    filter: <K extends EventType>(type: K) => all.filter((event) => event.type === type) as Envelope<K>[],
    clear: () => void all.splice(0),
    stop,
  };
}
