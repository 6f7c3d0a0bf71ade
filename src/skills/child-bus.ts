/**
 * The bus a skill's child agent publishes on: the parent's bus, seen through a view that
 * remembers which skills enclose the child. The child's dispatcher is made by the agent's own
 * dispatch stage, which hands on only its bus, so the nesting has to travel with the bus for the
 * recursion guard to see through child agents.
 */
import type { Bus, EventMeta } from '../bus/bus.js';

// A symbol, not a string key: it cannot collide with anything a bus implementation defines.
const ENCLOSING = Symbol('troupe.skill.enclosing');

type ChildBus = Bus & { readonly [ENCLOSING]: readonly string[] };

/**
 * A view of `bus` for a child agent run by the skills in `enclosing` (outermost first). It
 * publishes on `bus` itself; an event published without a `cause` (the child's `agent.spawned`)
 * gets `cause`, the id of the skill call's `tool.started`, so the log stays one tree.
 */
export function childBus(bus: Bus, enclosing: readonly string[], cause: string): Bus {
  const view: ChildBus = {
    publish: (type, data, meta?: EventMeta) => bus.publish(type, data, meta?.cause === undefined ? { ...meta, cause } : meta),
    on: bus.on.bind(bus),
    once: bus.once.bind(bus),
    get hasSubscribers() {
      return bus.hasSubscribers;
    },
    ids: bus.ids,
    clock: bus.clock,
    [ENCLOSING]: enclosing,
  };
  return view;
}

/** The skills enclosing the agent that publishes on `bus`, when it is a child agent's view. */
export function enclosingOnBus(bus: Bus | undefined): readonly string[] | undefined {
  return bus !== undefined && Object.hasOwn(bus, ENCLOSING) ? (bus as ChildBus)[ENCLOSING] : undefined;
}
