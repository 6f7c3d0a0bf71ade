import type { Redactor } from '../bus/safe-json.js';
import { CATALOGUE_VERSION, type Envelope } from '../bus/events.js';

/** Values a plain-data check looks at before it gives up and leaves the event to the careful path. */
const MAX_NODES = 2_000;

/**
 * The JSON text of an event when plain `JSON.stringify` writes exactly what the careful writer
 * (`safeJson` with redaction) would: data of plain objects, arrays, well-formed strings, finite
 * numbers, booleans and null, within the depth limit, and no sign of a secret in the text. Most
 * events are such, and this way costs a fraction of the careful one; anything else gives
 * `undefined`, and the caller takes the careful path.
 */
export function plainEventJson(event: Envelope, redactor: Redactor, maxDepth: number): string | undefined {
  const budget = { nodes: 0 };
  if (!isPlain(event.data, 0, maxDepth, budget)) return undefined;
  let text: string;
  try {
    const { id, type, at, scene, agent, cause, data } = event;
    text = JSON.stringify({ v: CATALOGUE_VERSION, id, type, at, scene, agent, cause, data });
  } catch {
    return undefined;
  }
  return redactor.mayHide?.(text) === false ? text : undefined;
}

function isPlain(value: unknown, depth: number, maxDepth: number, budget: { nodes: number }): boolean {
  if (++budget.nodes > MAX_NODES) return false;
  switch (typeof value) {
    case 'string':
      return (value as unknown as { isWellFormed(): boolean }).isWellFormed();
    case 'number':
      return Number.isFinite(value);
    case 'boolean':
      return true;
    case 'object': {
      if (value === null) return true;
      if (depth >= maxDepth) return false;
      if (Array.isArray(value)) {
        for (const item of value) if (item === undefined || !isPlain(item, depth + 1, maxDepth, budget)) return false;
        return true;
      }
      const prototype = Object.getPrototypeOf(value);
      if ((prototype !== Object.prototype && prototype !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) return false;
        const item = (value as Record<string, unknown>)[key];
        if (item !== undefined && !isPlain(item, depth + 1, maxDepth, budget)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}
