import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Envelope } from '../bus/events.js';
import type { Outcome } from '../outcome.js';
import { IMAGE_MEDIA_TYPES, isToolResult, toolResult, type ImageMediaType, type ResultPart, type ToolResult } from '../tools/result-parts.js';
import { errorMessage } from '../errors.js';

/** Image bytes kept inline in the log line (as base64) up to this size; larger go to a side file. */
export const DEFAULT_MAX_INLINE_BINARY_BYTES = 4 * 1024;

/** How a rich result's image is written in a log line: its bytes inline, or the side file holding them. */
export type LoggedImage = { type: 'image'; mediaType: ImageMediaType; bytes: number; sha256: string } & ({ base64: string } | { $side: string });

/** A rich result as a log line carries it: `{ "$parts": [...] }`. */
export type LoggedResult = { $parts: (Exclude<ResultPart, { type: 'image' }> | LoggedImage)[] };

const EXTENSIONS: Record<ImageMediaType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };
// Binary side files are named by their hash: the same image twice is stored once.
const BINARY_REFERENCE = /^[^/\\]+\.side\/[0-9a-f]{64}\.(?:png|jpg|gif|webp)$/;

/**
 * The data of an event as the log writes it: a `tool.completed` whose output is a rich result
 * gets `output: { $parts }`, each image inline as base64 when small, else as a reference to the
 * side file `store` wrote. Any other event's data is returned as it is.
 */
export function loggedData(event: Envelope, maxInlineBytes: number, store: (bytes: Uint8Array, name: string) => string): unknown {
  if (event.type !== 'tool.completed' || !isToolResult(event.data.output)) return event.data;
  const result = event.data.output;
  const parts: LoggedResult['$parts'] = result.parts.map((part) => {
    if (part.type !== 'image') return part;
    const sha256 = part.sha256 ?? createHash('sha256').update(part.data).digest('hex');
    const head = { type: 'image' as const, mediaType: part.mediaType, bytes: part.data.byteLength, sha256 };
    if (part.data.byteLength <= maxInlineBytes) return { ...head, base64: Buffer.from(part.data).toString('base64') };
    return { ...head, $side: store(part.data, `${sha256}.${EXTENSIONS[part.mediaType]}`) };
  });
  return { ...event.data, output: { $parts: parts } satisfies LoggedResult };
}

/**
 * Turns a logged `{ $parts }` output back into a rich result, reading side files next to the log
 * at `path`. Each image's bytes must match its SHA-256. The problem names the part that failed.
 */
export function restoreResult(path: string, value: unknown): Outcome<ToolResult, string> | undefined {
  const logged = (value as { $parts?: unknown } | null)?.$parts;
  if (!Array.isArray(logged)) return undefined;
  const parts: ResultPart[] = [];
  for (const [index, part] of logged.entries()) {
    const record = (part ?? {}) as Record<string, unknown>;
    if (record.type !== 'image') {
      parts.push(part as ResultPart);
      continue;
    }
    const bytes = imageBytes(path, record);
    if (!bytes.ok) return { ok: false, problem: `image part ${index + 1}: ${bytes.problem}` };
    parts.push({ type: 'image', data: bytes.value, mediaType: record.mediaType as ImageMediaType, ...({ sha256: record.sha256 } as { sha256?: string }) });
  }
  return { ok: true, value: toolResult(parts) };
}

function imageBytes(path: string, record: Record<string, unknown>): Outcome<Uint8Array, string> {
  if (!(IMAGE_MEDIA_TYPES as readonly unknown[]).includes(record.mediaType)) return { ok: false, problem: `unknown media type ${JSON.stringify(record.mediaType)}` };
  let bytes: Uint8Array;
  if (typeof record.base64 === 'string') {
    bytes = new Uint8Array(Buffer.from(record.base64, 'base64'));
  } else if (typeof record.$side === 'string') {
    if (!BINARY_REFERENCE.test(record.$side)) return { ok: false, problem: `side reference ${JSON.stringify(record.$side)} refused: not a side file of this log` };
    try {
      bytes = new Uint8Array(readFileSync(join(dirname(path), record.$side)));
    } catch (error) {
      return { ok: false, problem: `side file ${record.$side} unreadable: ${errorMessage(error)}` };
    }
  } else {
    return { ok: false, problem: 'neither base64 nor $side given' };
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== record.sha256) return { ok: false, problem: `bytes do not match their sha256 (${String(record.sha256).slice(0, 12)}…): the image is damaged` };
  return { ok: true, value: bytes };
}
