import { ConfigError } from '../errors.js';
import type { Envelope, Pattern } from './events.js';
import { patternMatcher } from './pattern-match.js';

/** What a buffered subscriber does when events arrive faster than its handler takes them. */
export type BackpressurePolicy = Backpressure['policy'];

/**
 * A queue policy, with its bound. `max` counts the events waiting; an unbounded `all`,
 * `coalesce` or `sample` queue that passes its `max` overflows (the subscriber is stopped).
 */
export type Backpressure =
  /** Every event, in order. */
  | { policy: 'all'; max?: number }
  /**
   * Every event, in order, except that streamed text waiting in the queue merges: an `llm.delta`
   * (also `llm.reasoning`, `llm.tool_call.delta`) that follows a waiting one of the same type,
   * agent, round and attempt joins it, text concatenated, under the later event's id.
   */
  | { policy: 'coalesce'; max?: number }
  /**
   * Only the latest event per key of the sampled `types` waits (default `SAMPLED_TYPES`): a newer
   * `scene.tick`, `agent.state` of the same agent or `world.changed` of the same path replaces the
   * waiting one, which is dropped and counted. Other types are kept, as with `all`. The order of
   * what is delivered is the order of publication.
   */
  | { policy: 'sample'; max?: number; types?: readonly Pattern[] }
  /** At most `max` events wait; past it the oldest give way and are counted as dropped. */
  | { policy: 'drop-oldest'; max: number };

/** The types `sample` keeps only the latest of, by default: state that a newer event replaces. */
export const SAMPLED_TYPES: readonly Pattern[] = ['scene.tick', 'agent.state', 'world.changed'];

/** What `push` did with an event. `overflow`: the queue passed its `max`; the caller gives up on it. */
export type PushOutcome = 'queued' | 'merged' | 'overflow';

/** One event taken from the queue, with what happened since the previous one was taken. */
export type Taken = {
  event: Envelope;
  /** Events dropped (`drop-oldest`, `sample`) since the previous event was taken. */
  dropped: number;
  /** How many published events this one stands for (more than 1 when `coalesce` merged them). */
  merged: number;
};

/** A bounded queue of envelopes that applies a backpressure policy as events are pushed. */
export type EventQueue = {
  readonly policy: BackpressurePolicy;
  readonly max: number;
  /**
   * Adds an event. With `counted: false` it does not count toward `max` (the inspector's replay
   * of history, which the client asked for); `drop-oldest` still drops it when full.
   */
  push(event: Envelope, options?: { counted?: boolean }): PushOutcome;
  /** The oldest waiting event, or undefined when none waits. */
  take(): Taken | undefined;
  /** Events waiting. */
  readonly size: number;
  /** Events dropped so far, in all. */
  readonly dropped: number;
  /** Forgets every waiting event. */
  clear(): void;
};

/** Checks a policy's options and fills in the bound; throws a ConfigError naming what is wrong. */
export function resolveBackpressure(backpressure: Backpressure): Required<Pick<Backpressure, 'policy' | 'max'>> {
  const { policy, max = Number.POSITIVE_INFINITY } = backpressure ?? ({} as Backpressure);
  if (!POLICIES.includes(policy)) {
    throw new ConfigError(`backpressure policy must be one of ${POLICIES.map((name) => `'${name}'`).join(', ')}, got ${JSON.stringify(policy)}`);
  }
  const finite = Number.isSafeInteger(max) && max >= 1;
  if (policy === 'drop-oldest' && !finite) throw new ConfigError(`backpressure 'drop-oldest' needs max: a positive integer, got ${String(max)}`);
  if (!finite && max !== Number.POSITIVE_INFINITY) throw new ConfigError(`backpressure max must be a positive integer, got ${String(max)}`);
  return { policy, max };
}

export const POLICIES: readonly BackpressurePolicy[] = ['all', 'coalesce', 'sample', 'drop-oldest'];

type Entry = { event: Envelope; counted: boolean; dead: boolean; key: string | undefined; merged: number };

// Dead entries (sampled away) are removed lazily; compact once they outnumber the live ones.
const COMPACT_AFTER = 1024;

/**
 * Creates a queue for one subscriber. Pushing costs O(1) whatever the policy; nothing is copied
 * but the envelopes `coalesce` merges.
 *
 * @example
 * const queue = createEventQueue({ policy: 'drop-oldest', max: 2 });
 * for (const event of events) queue.push(event);
 * queue.take(); // { event: <the second last>, dropped: events.length - 2, merged: 1 }
 */
export function createEventQueue(backpressure: Backpressure): EventQueue {
  const { policy, max } = resolveBackpressure(backpressure);
  const sampled = policy === 'sample' ? patternMatcher((backpressure as { types?: readonly Pattern[] }).types ?? SAMPLED_TYPES) : undefined;
  let entries: Entry[] = [];
  let head = 0;
  let live = 0;
  let counted = 0;
  let droppedSince = 0;
  let droppedTotal = 0;
  const latest = new Map<string, Entry>();

  const kill = (entry: Entry): void => {
    entry.dead = true;
    live--;
    if (entry.counted) counted--;
    if (entry.key !== undefined && latest.get(entry.key) === entry) latest.delete(entry.key);
    droppedSince++;
    droppedTotal++;
  };
  const compact = (): void => {
    if (entries.length - head - live < Math.max(COMPACT_AFTER, live)) return;
    entries = entries.slice(head).filter((entry) => !entry.dead);
    head = 0;
  };
  /** Takes the entry at the head off the array, which is sliced once its front half is spent. */
  const advance = (): Entry => {
    const entry = entries[head]!;
    entries[head++] = undefined as unknown as Entry; // let the envelope go
    if (head >= COMPACT_AFTER && head * 2 >= entries.length) {
      entries = entries.slice(head);
      head = 0;
    }
    return entry;
  };
  const tail = (): Entry | undefined => {
    for (let index = entries.length - 1; index >= head; index--) if (!entries[index]!.dead) return entries[index];
    return undefined;
  };

  return {
    policy,
    max,
    push(event, options) {
      const isCounted = options?.counted !== false;
      if (policy === 'coalesce') {
        const last = tail();
        const joined = last === undefined ? undefined : joinStreamed(last.event, event);
        if (joined !== undefined) {
          last!.event = joined;
          last!.merged++;
          return 'merged';
        }
      }
      let key: string | undefined;
      if (sampled?.(event.type)) {
        key = sampleKey(event);
        const waiting = latest.get(key);
        if (waiting !== undefined) kill(waiting);
      }
      const entry: Entry = { event, counted: isCounted, dead: false, key, merged: 1 };
      entries.push(entry);
      live++;
      if (isCounted) counted++;
      if (key !== undefined) {
        latest.set(key, entry);
        compact();
      }
      if (policy === 'drop-oldest') {
        while (live > max) {
          const oldest = advance();
          if (!oldest.dead) kill(oldest);
        }
        return 'queued';
      }
      return counted > max ? 'overflow' : 'queued';
    },
    take() {
      while (head < entries.length) {
        const entry = advance();
        if (entry.dead) continue;
        live--;
        if (entry.counted) counted--;
        if (entry.key !== undefined && latest.get(entry.key) === entry) latest.delete(entry.key);
        const taken = { event: entry.event, dropped: droppedSince, merged: entry.merged };
        droppedSince = 0;
        return taken;
      }
      return undefined;
    },
    get size() {
      return live;
    },
    get dropped() {
      return droppedTotal;
    },
    clear() {
      entries = [];
      head = 0;
      live = 0;
      counted = 0;
      latest.clear();
    },
  };
}

/** The streamed types `coalesce` merges, and the field that carries their text. */
const STREAMED_TEXT: Readonly<Record<string, string>> = {
  'llm.delta': 'text',
  'llm.reasoning': 'text',
  'llm.tool_call.delta': 'argumentsDelta',
};

/**
 * `first` and `next` as one event, when both are pieces of the same stream (type, scene, agent,
 * round, attempt, and call index for tool-call pieces); else undefined. The result has the later
 * event's id and time, so a client resuming after it resumes after both.
 */
function joinStreamed(first: Envelope, next: Envelope): Envelope | undefined {
  const field = STREAMED_TEXT[next.type];
  if (field === undefined || first.type !== next.type || first.agent !== next.agent || first.scene !== next.scene) return undefined;
  const a = first.data as Record<string, unknown>;
  const b = next.data as Record<string, unknown>;
  if (a.round !== b.round || a.attempt !== b.attempt || a.index !== b.index) return undefined;
  if (typeof a[field] !== 'string' || typeof b[field] !== 'string') return undefined;
  // A tool call's id and name arrive with its first piece only: keep them.
  const data = { ...b, ...a, [field]: (a[field] as string) + (b[field] as string) };
  return { ...next, cause: first.cause, data } as Envelope;
}

/** What a sampled event replaces: the same type, scene and agent, and for the world, the same path. */
function sampleKey(event: Envelope): string {
  const path = event.type === 'world.changed' ? event.data.path : '';
  return `${event.type}\u0000${event.scene ?? ''}\u0000${event.agent ?? ''}\u0000${path}`;
}
