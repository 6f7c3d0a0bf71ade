import type { Envelope } from '../bus/events.js';
import { serializeEnvelope } from '../bus/serialize-event.js';
import type { Redactor } from '../bus/safe-json.js';

/** Fields that say how long something took: they differ from one run to the next and are not compared. */
const TIMINGS: ReadonlySet<string> = new Set(['at', 'durationMs', 'latencyMs', 'wallMs']);

/**
 * An event as the log would write it (redacted, with exotic values written as the log writes them),
 * then read back: the form in which a re-run event is compared with a logged one.
 */
export function loggedForm(event: Envelope, redactor: Redactor): unknown {
  const { text } = serializeEnvelope(event, { redactor });
  return JSON.parse(text);
}

/**
 * Whether two events in logged form are the same, ids and times aside (the envelope's `id`, which
 * a replay gives each event once it matched; `at`, and `durationMs`, `latencyMs`, `wallMs` at any depth).
 */
export function sameEvent(expected: unknown, actual: unknown): boolean {
  return equal(withoutId(strip(expected)), withoutId(strip(actual)));
}

/** The first field where two events in logged form differ, as a path (`data.calls[0].args.id`), or undefined. */
export function firstDifference(expected: unknown, actual: unknown): string | undefined {
  return differ(withoutId(strip(expected)), withoutId(strip(actual)), '');
}

function withoutId(event: unknown): unknown {
  if (event === null || typeof event !== 'object') return event;
  const { id: _id, ...rest } = event as Record<string, unknown>;
  return rest;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // `v` is the catalogue version and `c` the line's checksum: the log's, not the event's.
    if (!TIMINGS.has(key) && key !== 'v' && key !== 'c') out[key] = strip(item);
  }
  return out;
}

function equal(a: unknown, b: unknown): boolean {
  return differ(a, b, '') === undefined;
}

function differ(a: unknown, b: unknown, path: string): string | undefined {
  if (a === b) return undefined;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return path || '(the event)';
  if (Array.isArray(a) !== Array.isArray(b)) return path || '(the event)';
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return `${path}.length`;
    for (let index = 0; index < a.length; index++) {
      const found = differ(a[index], other[index], `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
    const found = differ(left[key], right[key], path === '' ? key : `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}
