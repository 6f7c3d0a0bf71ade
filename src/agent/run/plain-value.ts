import { checkToolResult, isToolResult, toolResult, type ResultPart } from '../../tools/result-parts.js';

/**
 * A run's state as JSON can carry it. The state is plain data but for two things JSON would lose:
 * image bytes (in messages and rich results) and rich tool results themselves. Both are written
 * as tagged objects, and any object of the run's own that happens to have the tag key is wrapped,
 * so decoding never mistakes user data for a tag. Everything else follows JSON's rules (`toJSON`,
 * dropped functions), except that a cycle becomes `"[Circular]"` and a BigInt its digits and `n`,
 * instead of throwing.
 */
const TAG = '$troupe';

type Tagged =
  | { [TAG]: 'bytes'; base64: string }
  | { [TAG]: 'result'; parts: unknown[] }
  | { [TAG]: 'object'; value: Record<string, unknown> };

/** A JSON-safe deep copy of `value`, with bytes and rich results tagged. */
export function encodePlain(value: unknown): unknown {
  return encode(value, []);
}

/** Restores what `encodePlain` tagged: bytes as `Uint8Array`, rich results as checked results. */
export function decodePlain(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decodePlain);
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, TAG)) return decodeTagged(record as Tagged);
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) copy[key] = decodePlain(item);
  return copy;
}

function encode(value: unknown, ancestors: object[]): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? undefined : value;
  if (ancestors.includes(value)) return '[Circular]';
  if (value instanceof Uint8Array) return { [TAG]: 'bytes', base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  ancestors.push(value);
  try {
    if (isToolResult(value)) return { [TAG]: 'result', parts: value.parts.map((part) => encode(part, ancestors)) };
    const json = (value as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function') return encode(json.call(value), ancestors);
    if (Array.isArray(value)) return value.map((item) => encode(item, ancestors) ?? null);
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const encoded = encode(item, ancestors);
      if (encoded !== undefined) copy[key] = encoded;
    }
    return Object.hasOwn(copy, TAG) ? { [TAG]: 'object', value: copy } : copy;
  } finally {
    ancestors.pop();
  }
}

function decodeTagged(tagged: Tagged): unknown {
  switch (tagged[TAG]) {
    case 'bytes':
      return new Uint8Array(Buffer.from(tagged.base64, 'base64'));
    case 'result': {
      // Checked again: the restored result is a result like any other (hashed, copied, frozen).
      const checked = checkToolResult(toolResult(tagged.parts.map(decodePlain) as ResultPart[]));
      return checked.ok ? checked.value : { parts: tagged.parts };
    }
    case 'object': {
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(tagged.value)) copy[key] = decodePlain(item);
      return copy;
    }
    default:
      throw new TypeError(`unknown tag ${JSON.stringify((tagged as Record<string, unknown>)[TAG])} in a snapshot`);
  }
}
