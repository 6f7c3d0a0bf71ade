import { CATALOGUE_VERSION, type Envelope } from './events.js';
import { safeJson, type SafeJsonOptions, type SafeJsonResult } from './safe-json.js';

export { safeJson, REDACTED, DEFAULT_MAX_DEPTH } from './safe-json.js';
export type { Redactor, SafeJsonOptions, SafeJsonResult } from './safe-json.js';

export type SerializeEnvelopeOptions = SafeJsonOptions & {
  /** Already serialized JSON to use for `data` verbatim (the session log's side-file placeholder). */
  dataText?: string;
};

/**
 * One envelope as one line of JSON with `v: CATALOGUE_VERSION` (docs/bus.md), for the log, SSE
 * and Redis. `data` goes through `safeJson`, so deep, cyclic or exotic data never throws. With
 * `maxChars`, the envelope fields are always kept and only `data` gives way: it is replaced by
 * `{ "$truncated": true, "chars": n, "preview": "…" }`, so the line stays valid JSON. Short
 * top-level string fields of `data` (up to 256 characters: `callId`, `name`, `argsHash`…) are
 * kept beside the marker, so a reader can still tell what the event was about and answer it.
 *
 * @example
 * serializeEnvelope(bus.publish('agent.said', { text: 'hi' })).text;
 * // '{"v":1,"id":"e-1","type":"agent.said","at":…,"data":{"text":"hi"}}'
 */
export function serializeEnvelope(envelope: Envelope, options: SerializeEnvelopeOptions = {}): SafeJsonResult {
  const { data, ...meta } = envelope;
  const { dataText: given, maxChars = Number.POSITIVE_INFINITY, ...rest } = options;
  const head = safeJson({ v: CATALOGUE_VERSION, ...meta }, rest);
  const body = given === undefined ? safeJson(data, rest) : { text: given, truncated: false, issues: [] };
  let dataText = body.text;
  let truncated = head.truncated || body.truncated;
  const room = maxChars - head.text.length - ',"data":'.length;
  if (dataText.length > room) {
    // A preview of half the room leaves space for JSON escaping of the fragment and the wrapper.
    const kept = given === undefined ? keptFields(body.text) : {};
    let previewChars = Math.max(0, Math.floor(room / 2) - 64 - JSON.stringify(kept).length);
    do {
      dataText = JSON.stringify({ ...kept, $truncated: true, chars: body.text.length, preview: wellFormedPrefix(body.text, previewChars) });
      previewChars = Math.floor(previewChars / 2);
    } while (dataText.length > room && previewChars > 0);
    truncated = true;
  }
  return { text: `${head.text.slice(0, -1)},"data":${dataText}}`, truncated, issues: [...head.issues, ...body.issues] };
}

/** Most characters of one top-level string field kept beside a `$truncated` marker. */
const MAX_KEPT_CHARS = 256;

/** The short top-level string fields of data's (already redacted) JSON text. */
function keptFields(text: string): Record<string, string> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return {};
  }
  const kept: Record<string, string> = {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return kept;
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === 'string' && value.length <= MAX_KEPT_CHARS && key.length <= MAX_KEPT_CHARS && key !== '__proto__') kept[key] = value;
  }
  return kept;
}

function wellFormedPrefix(text: string, max: number): string {
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
