import { DEFAULT_MAX_DEPTH, type Redactor } from '../bus/safe-json.js';
import { CATALOGUE_VERSION, type Envelope } from '../bus/events.js';
import { serializeEnvelope } from '../bus/serialize-event.js';

/** Values a plain-data check looks at before it gives up and leaves the event to the careful path. */
const MAX_NODES = 2_000;
/** Names (types, scenes, agents) whose JSON form is kept: more than a scene has agents, less than memory minds. */
const MAX_CACHED_NAMES = 100_000;

const NOT_PLAIN = 0;
const PLAIN = 1;
/** Plain, and frozen all the way down: its JSON text can never change, so it is kept. */
const FROZEN = 2;
type Plainness = typeof NOT_PLAIN | typeof PLAIN | typeof FROZEN;

/**
 * Writes events as the session log's JSON lines, when plain `JSON.stringify` writes exactly what
 * the careful writer (`safeJson` with redaction) would: data of plain objects, arrays, well-formed
 * strings, finite numbers, booleans and null, within the depth limit, and no sign of a secret in
 * the text. Most events are such; anything else gives `undefined`, and the caller takes the
 * careful path.
 *
 * A log writes every event of a scene, so the fixed cost of a line counts: the JSON of names
 * (types, scenes, agents) is kept, and so is the JSON of data frozen all the way down (the
 * agents' `agent.state` changes are shared constants), each checked for secrets once.
 */
export function createLineWriter(redactor: Redactor, maxDepth: number): (event: Envelope) => string | undefined {
  const names = new Map<string, string | null>();
  const frozenData = new WeakMap<object, string | null>();
  const mayHide = redactor.mayHide;
  /** JSON text with no sign of a secret, or `undefined` (no `mayHide`: every event takes the careful path). */
  const checked = (json: string): string | undefined => (mayHide?.(json) === false ? json : undefined);
  /** A name's JSON, kept; `undefined` when it may hide a secret (or is not a well-formed string). */
  const name = (value: string): string | undefined => {
    let json = names.get(value);
    if (json === undefined) {
      json = typeof value === 'string' && wellFormed(value) ? (checked(JSON.stringify(value)) ?? null) : null;
      if (names.size < MAX_CACHED_NAMES) names.set(value, json);
    }
    return json ?? undefined;
  };
  const dataJson = (data: unknown): string | undefined => {
    if (data !== null && typeof data === 'object') {
      const kept = frozenData.get(data);
      if (kept !== undefined) return kept ?? undefined;
    }
    const plainness = isPlain(data, 0, maxDepth, { nodes: 0 });
    if (plainness === NOT_PLAIN) return undefined;
    let json: string | undefined;
    try {
      json = checked(JSON.stringify(data));
    } catch {
      json = undefined;
    }
    if (plainness === FROZEN && data !== null && typeof data === 'object') frozenData.set(data, json ?? null);
    return json;
  };
  const prefix = `{"v":${CATALOGUE_VERSION},"id":`;
  return (event) => {
    const { id, type, at, scene, agent, cause, data } = event;
    if (typeof id !== 'string' || !wellFormed(id) || !Number.isFinite(at)) return undefined;
    const typeJson = name(type);
    const dataText = data === undefined ? '' : dataJson(data);
    if (typeJson === undefined || dataText === undefined) return undefined;
    if (cause !== undefined && (typeof cause !== 'string' || !wellFormed(cause))) return undefined;
    const idJson = JSON.stringify(id);
    const causeJson = cause === undefined ? undefined : JSON.stringify(cause);
    // Ids are new in each event: one scan covers both.
    if (mayHide?.(causeJson === undefined ? idJson : idJson + causeJson) !== false) return undefined;
    let line = `${prefix}${idJson},"type":${typeJson},"at":${at}`;
    if (scene !== undefined) {
      const sceneJson = name(scene);
      if (sceneJson === undefined) return undefined;
      line += `,"scene":${sceneJson}`;
    }
    if (agent !== undefined) {
      const agentJson = name(agent);
      if (agentJson === undefined) return undefined;
      line += `,"agent":${agentJson}`;
    }
    if (causeJson !== undefined) line += `,"cause":${causeJson}`;
    return data === undefined ? `${line}}` : `${line},"data":${dataText}}`;
  };
}

/**
 * Writes any event as one JSON line of at most `maxChars` characters: plain `JSON.stringify` when
 * the event is plain and short enough (see `createLineWriter`), else the careful writer, which
 * redacts, replaces what JSON cannot hold and truncates `data`. The two give the same text for
 * the events the fast path takes.
 */
export function createEventWriter(redactor: Redactor, maxChars: number, maxDepth = DEFAULT_MAX_DEPTH): (event: Envelope) => string {
  const plainLine = createLineWriter(redactor, maxDepth);
  const careful = { redactor, maxChars, maxDepth };
  return (event) => {
    const plain = plainLine(event);
    return plain !== undefined && plain.length <= maxChars ? plain : serializeEnvelope(event, careful).text;
  };
}

function isPlain(value: unknown, depth: number, maxDepth: number, budget: { nodes: number }): Plainness {
  if (++budget.nodes > MAX_NODES) return NOT_PLAIN;
  switch (typeof value) {
    case 'string':
      return wellFormed(value) ? FROZEN : NOT_PLAIN;
    case 'number':
      return Number.isFinite(value) ? FROZEN : NOT_PLAIN;
    case 'boolean':
      return FROZEN;
    case 'object': {
      if (value === null) return FROZEN;
      if (depth >= maxDepth) return NOT_PLAIN;
      let least: Plainness = Object.isFrozen(value) ? FROZEN : PLAIN;
      if (Array.isArray(value)) {
        for (const item of value) {
          const plainness = item === undefined ? NOT_PLAIN : isPlain(item, depth + 1, maxDepth, budget);
          if (plainness === NOT_PLAIN) return NOT_PLAIN;
          if (plainness < least) least = plainness;
        }
        return least;
      }
      const prototype = Object.getPrototypeOf(value);
      if ((prototype !== Object.prototype && prototype !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) return NOT_PLAIN;
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        const plainness = isPlain(item, depth + 1, maxDepth, budget);
        if (plainness === NOT_PLAIN) return NOT_PLAIN;
        if (plainness < least) least = plainness;
      }
      return least;
    }
    default:
      return NOT_PLAIN;
  }
}

/** No lone surrogates: such a string is one `JSON.stringify` escapes and the careful writer replaces. */
function wellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}
