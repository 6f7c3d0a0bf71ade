import { isDeepStrictEqual } from 'node:util';
import { formatBytes, IMAGE_MEDIA_TYPES, RESULT_LIMITS, sniffImage, toolResult, type ResultPart, type ToolResult } from '../tools/result-parts.js';
import { ToolError } from '../tools/tool-error.js';

/** An MCP `CallToolResult` as the SDK returns it (only the fields troupe reads). */
export type McpCallResult = {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
};

/**
 * What an MCP tool call gives the model: one text part alone as a plain string, anything else as
 * a rich result (`toolResult`). `structuredContent` comes first as a JSON part; a text part that
 * only repeats it (the spec's backward-compatible copy) is left out, other text is kept.
 * Images troupe passes on (PNG, JPEG, GIF, WebP, within the size limits) become image parts,
 * typed by their bytes; every other image, audio, resource link and binary resource becomes a
 * line that says what it was; an embedded text resource becomes its text under such a line.
 * `isError: true` throws a `ToolError` (kind `execution`) with the server's text.
 */
export function callResultOutput(result: McpCallResult): string | ToolResult {
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const structured = result.structuredContent;
  const images = { count: 0, bytes: 0 };
  const parts: ResultPart[] = [];
  if (result.isError === true) {
    const text = content.map((item) => textOf(item)).join('\n').trim();
    throw new ToolError(text === '' ? 'the MCP server reported an error and gave no message' : text, { kind: 'execution', retryable: false });
  }
  // An object in the 2025 spec; any JSON value in later ones.
  const hasStructured = structured !== undefined && structured !== null;
  if (hasStructured) parts.push({ type: 'json', value: structured });
  for (const item of content) {
    if (hasStructured && repeatsStructured(item, structured)) continue;
    parts.push(partOf(item, images));
  }
  if (parts.length === 0) return '';
  const [only] = parts;
  if (parts.length === 1 && only?.type === 'text') return only.text;
  return toolResult(capParts(parts));
}

/**
 * The spec asks servers to repeat structured content as text, for older clients; the JSON part
 * carries it already. A copy is the structured content, or its only field (servers wrap a list or
 * a file's text in one), as JSON text or, for a string, as the text itself.
 */
function repeatsStructured(item: unknown, structured: unknown): boolean {
  const text = field(item, 'text');
  if (field(item, 'type') !== 'text' || typeof text !== 'string') return false;
  const copies: unknown[] = [structured];
  if (typeof structured === 'object' && structured !== null && !Array.isArray(structured)) {
    const values = Object.values(structured);
    if (values.length === 1) copies.push(values[0]);
  }
  if (copies.includes(text)) return true;
  try {
    const parsed: unknown = JSON.parse(text);
    return copies.some((copy) => isDeepStrictEqual(parsed, copy));
  } catch {
    return false;
  }
}

function partOf(item: unknown, images: { count: number; bytes: number }): ResultPart {
  if (field(item, 'type') !== 'image') return { type: 'text', text: textOf(item) };
  const declared = String(field(item, 'mimeType') ?? 'unknown type');
  const data = field(item, 'data');
  const bytes = typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.alloc(0);
  const sniffed = sniffImage(bytes);
  // Providers refuse an image whose bytes and media type disagree: the bytes decide.
  const problem =
    sniffed === undefined
      ? `not passed on: troupe passes ${IMAGE_MEDIA_TYPES.join(', ')} images`
      : bytes.byteLength > RESULT_LIMITS.maxImageBytes
        ? `not passed on: over the ${formatBytes(RESULT_LIMITS.maxImageBytes)} limit per image`
        : images.bytes + bytes.byteLength > RESULT_LIMITS.maxTotalImageBytes
          ? `not passed on: the images of one result may add up to ${formatBytes(RESULT_LIMITS.maxTotalImageBytes)}`
          : undefined;
  if (problem !== undefined) return { type: 'text', text: `[image: ${declared}, ${formatBytes(bytes.byteLength)}, ${problem}]` };
  images.count++;
  images.bytes += bytes.byteLength;
  return { type: 'image', data: bytes, mediaType: sniffed! };
}

/** What a content item says as text: its text, or a line naming what it was. */
function textOf(item: unknown): string {
  const type = field(item, 'type');
  switch (type) {
    case 'text': {
      const text = field(item, 'text');
      return typeof text === 'string' ? text : '';
    }
    case 'image':
    case 'audio': {
      const data = field(item, 'data');
      const size = typeof data === 'string' ? formatBytes(Math.floor((data.length * 3) / 4)) : 'no data';
      return `[${type}: ${String(field(item, 'mimeType') ?? 'unknown type')}, ${size}, not shown]`;
    }
    case 'resource_link': {
      const about = [field(item, 'mimeType'), field(item, 'description')].filter((value) => typeof value === 'string' && value !== '');
      return `[resource link: ${String(field(item, 'name') ?? '')} <${String(field(item, 'uri') ?? '')}>${about.length > 0 ? ` (${about.join('; ')})` : ''}]`;
    }
    case 'resource': {
      const resource = field(item, 'resource');
      const uri = String(field(resource, 'uri') ?? '');
      const mimeType = field(resource, 'mimeType');
      const kind = typeof mimeType === 'string' ? `, ${mimeType}` : '';
      const text = field(resource, 'text');
      if (typeof text === 'string') return `[resource: <${uri}>${kind}]\n${text}`;
      const blob = field(resource, 'blob');
      const size = typeof blob === 'string' ? `, ${formatBytes(Math.floor((blob.length * 3) / 4))}` : '';
      return `[resource: <${uri}>${kind}${size}, binary, not shown]`;
    }
    default:
      return `[content of type ${JSON.stringify(String(type))}, not shown]`;
  }
}

/** A result has at most `RESULT_LIMITS.maxParts` parts: the rest are counted in a last line. */
function capParts(parts: ResultPart[]): ResultPart[] {
  if (parts.length <= RESULT_LIMITS.maxParts) return parts;
  const kept = parts.slice(0, RESULT_LIMITS.maxParts - 1);
  kept.push({ type: 'text', text: `[${parts.length - kept.length} more content items not shown]` });
  return kept;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}
