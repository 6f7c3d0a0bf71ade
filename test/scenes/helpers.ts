import type { Envelope, JsonValue, Scene } from '../../src/index.js';

/** Records every envelope a scene publishes, in order, from now on. */
export function record(scene: Scene): Envelope[] {
  const events: Envelope[] = [];
  scene.bus.on('*', (event) => void events.push(event));
  return events;
}

/** The events of one type, narrowed. */
export function ofType<T extends Envelope['type']>(events: readonly Envelope[], type: T): Envelope<T>[] {
  return events.filter((event) => event.type === type) as Envelope<T>[];
}

/** The world as `world.changed` events rebuild it from a starting snapshot. */
export function replayWorld(initial: JsonValue, events: readonly Envelope[]): JsonValue {
  const world = structuredClone(initial) as Record<string, JsonValue>;
  for (const event of ofType(events, 'world.changed')) {
    const keys = event.data.path.split('.');
    const last = keys.pop()!;
    let node = world;
    for (const key of keys) node = (node[key] ??= {}) as Record<string, JsonValue>;
    if (event.data.value === undefined) delete node[last];
    else node[last] = structuredClone(event.data.value) as JsonValue;
  }
  return world;
}

/** Who said or did what, in order: a run's story without ids or timings. */
export function story(events: readonly Envelope[]): string[] {
  const lines: string[] = [];
  for (const event of events) {
    if (event.type === 'agent.said') lines.push(`${event.agent} said ${event.data.text}`);
    else if (event.type === 'tool.completed') lines.push(`${event.agent} ${event.data.name} ${JSON.stringify(event.data.args)}`);
  }
  return lines;
}
