import { createHash } from 'node:crypto';
import { failure as problem, type Outcome } from '../outcome.js';
import { deepFreeze } from './freeze-args.js';
import type { ImageMediaType, ResultPartInfo } from '../bus/event-data.js';
import { errorMessage } from '../errors.js';

export type { ImageMediaType, ResultPartInfo } from '../bus/event-data.js';

/** Text for the model, quoted into the observation like a string output. */
export type TextPart = { type: 'text'; text: string };
/** A value the model reads as JSON text. It must be JSON: no cycles, no BigInt. */
export type JsonPart = { type: 'json'; value: unknown };
/** An image: its bytes and what they are. */
export type ImagePart = {
  type: 'image';
  data: Uint8Array;
  mediaType: ImageMediaType;
  /** Hex SHA-256 of `data`; set by the dispatcher on the result it checked (ignored when given). */
  readonly sha256?: string;
};
/** One part of a rich tool result. */
export type ResultPart = TextPart | JsonPart | ImagePart;

/**
 * A rich tool result: what `execute` returns to give the model more than one value, or an image.
 * Made by `toolResult(...)`; any other return value is an output as before.
 */
export interface ToolResult {
  readonly parts: readonly ResultPart[];
  /**
   * The parts without their bytes, what SSE, the inspector and `safeJson` see: text and JSON
   * parts as they are, each image as `{ type, mediaType, bytes, sha256 }`.
   */
  toJSON(): { parts: unknown[] };
}

/** The limits a rich result must keep; a result past one fails the call (`tool.failed`). */
export const RESULT_LIMITS = Object.freeze({
  /** Parts of one result. */
  maxParts: 64,
  /** Bytes of one image: Anthropic refuses images over 5 MB. */
  maxImageBytes: 5 * 1024 * 1024,
  /** Image bytes of one result: base64 makes 15 MiB about 20 MB, Gemini's inline request limit. */
  maxTotalImageBytes: 15 * 1024 * 1024,
});

export const IMAGE_MEDIA_TYPES: readonly ImageMediaType[] = Object.freeze(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

// A registered symbol, so that two copies of troupe in one process still recognise each other's results.
const BRAND = Symbol.for('troupe.toolResult');

class RichResult implements ToolResult {
  readonly parts: readonly ResultPart[];
  // A checked result's image bytes as the model is sent them: copies nobody else holds, since a
  // Uint8Array cannot be frozen and subscribers get the `data` of the parts.
  readonly #sent: ReadonlyMap<ResultPart, Uint8Array>;

  constructor(parts: readonly ResultPart[], sent: ReadonlyMap<ResultPart, Uint8Array> = new Map()) {
    this.parts = parts;
    this.#sent = sent;
  }

  /** The images the model is sent, in order: a checked result's own copies of the bytes. */
  static sentImages(result: RichResult): { data: Uint8Array; mediaType: ImageMediaType }[] {
    return imagesOf(result).map((part) => ({ data: result.#sent.get(part) ?? part.data, mediaType: part.mediaType }));
  }

  toJSON(): { parts: unknown[] } {
    // Unchecked parts may be anything: describe, never throw (safeJson calls this for the log).
    const parts = Array.isArray(this.parts) ? this.parts : [];
    return { parts: parts.map((part: unknown) => (isImageLike(part) ? imageInfo(part) : part)) };
  }
}
Object.defineProperty(RichResult.prototype, BRAND, { value: true });

/**
 * Makes a rich tool result from parts: text, JSON and images, in the order the model should see
 * them. Checked when the tool returns it: a malformed part fails the call with a `tool.failed`
 * that names it, before the model sees anything.
 *
 * @example
 * execute: async ({ city }) => {
 *   const png = await renderChart(city);
 *   return toolResult([
 *     { type: 'text', text: `Rainfall in ${city}, last 12 months:` },
 *     { type: 'image', data: png, mediaType: 'image/png' },
 *     { type: 'json', value: { wettest: 'March', mm: 112 } },
 *   ]);
 * }
 */
export const toolResult = Object.assign((parts: ResultPart | readonly ResultPart[]): ToolResult => new RichResult(Array.isArray(parts) ? [...parts] : [parts as ResultPart]), {
  /** A result of one text part. */
  text: (text: string): ToolResult => new RichResult([{ type: 'text', text }]),
  /** A result of one JSON part: the model reads `JSON.stringify(value)`. */
  json: (value: unknown): ToolResult => new RichResult([{ type: 'json', value }]),
  /** A result of one image. */
  image: (data: Uint8Array, mediaType: ImageMediaType): ToolResult => new RichResult([{ type: 'image', data, mediaType }]),
});

/** Whether a tool's return value is a rich result made by `toolResult`. */
export function isToolResult(value: unknown): value is ToolResult {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/**
 * Checks a rich result and copies it: image bytes copied (the tool may reuse its buffer) and
 * hashed, JSON proven serializable and kept as a deep-frozen copy. The problem, when there is
 * one, names the part and says what is allowed. Never throws, whatever the tool put in the parts
 * (getters, cycles, proxies). The copy's image `data` is what subscribers see; the model is sent a
 * second copy (`sentImages`), so writing to the bytes of an event changes nothing it is sent.
 */
export function checkToolResult(result: ToolResult): Outcome<ToolResult, string> {
  try {
    const given: unknown = result.parts;
    if (!Array.isArray(given)) return problem('its parts are not a list');
    if (given.length === 0) return problem('it has no parts; return at least one, or a plain value');
    if (given.length > RESULT_LIMITS.maxParts) return problem(`it has ${given.length} parts; at most ${RESULT_LIMITS.maxParts} are allowed`);
    const parts: ResultPart[] = [];
    const sent = new Map<ResultPart, Uint8Array>();
    let imageBytes = 0;
    for (let index = 0; index < given.length; index++) {
      const checked = checkPart(given[index], index);
      if (!checked.ok) return checked;
      const part = checked.value;
      if (part.type === 'image') {
        imageBytes += part.data.byteLength;
        if (imageBytes > RESULT_LIMITS.maxTotalImageBytes) {
          return problem(`its images add up to more than ${formatBytes(RESULT_LIMITS.maxTotalImageBytes)} (the limit per result)`);
        }
        sent.set(part, new Uint8Array(part.data));
      }
      parts.push(part);
    }
    return { ok: true, value: Object.freeze(new RichResult(Object.freeze(parts), sent)) };
  } catch (error) {
    return problem(`reading it threw: ${errorMessage(error)}`);
  }
}

function checkPart(part: unknown, index: number): Outcome<ResultPart, string> {
  const at = `part ${index + 1}`;
  if (typeof part !== 'object' || part === null || Array.isArray(part)) {
    return problem(`${at} is not a part: expected { type: 'text' | 'json' | 'image', … }, got ${kindOf(part)}`);
  }
  const record = part as Record<string, unknown>;
  switch (record.type) {
    case 'text':
      if (typeof record.text !== 'string') return problem(`${at} (text): text must be a string, got ${kindOf(record.text)}`);
      return { ok: true, value: Object.freeze({ type: 'text', text: record.text }) };
    case 'json': {
      let text: string | undefined;
      try {
        text = JSON.stringify(record.value);
      } catch (error) {
        return problem(`${at} (json): the value is not JSON (${errorMessage(error)})`);
      }
      if (text === undefined) return problem(`${at} (json): the value is not JSON (${kindOf(record.value)})`);
      // The model reads the JSON text; keep exactly that value, frozen, so that neither the tool
      // nor a subscriber (tool.completed, tool.result.approval.requested) can change it.
      return { ok: true, value: Object.freeze({ type: 'json', value: deepFreeze(JSON.parse(text) as unknown) }) };
    }
    case 'image':
      return checkImage(record, at);
    default:
      return problem(`${at}: unknown type ${JSON.stringify(String(record.type))}; expected 'text', 'json' or 'image'`);
  }
}

function checkImage(record: Record<string, unknown>, at: string): Outcome<ResultPart, string> {
  const checked = checkImageBytes(record, at);
  if (!checked.ok) return checked;
  const { data, mediaType } = checked.value;
  const sha256 = createHash('sha256').update(data).digest('hex');
  return { ok: true, value: Object.freeze({ type: 'image', data, mediaType, sha256 }) };
}

/**
 * Checks the images given with a run's input (`RunOptions.images`) as a rich result's images are
 * checked: supported media type, bytes that are that format, per-image and total size. Returns
 * copies of the bytes (the caller may reuse its buffers), or the problem naming the image.
 */
export function checkInputImages(images: unknown): Outcome<{ data: Uint8Array; mediaType: ImageMediaType }[], string> {
  try {
    if (!Array.isArray(images)) return problem(`images must be a list of { data, mediaType }, got ${kindOf(images)}`);
    if (images.length > RESULT_LIMITS.maxParts) return problem(`${images.length} images; at most ${RESULT_LIMITS.maxParts} are allowed`);
    const checked: { data: Uint8Array; mediaType: ImageMediaType }[] = [];
    let total = 0;
    for (let index = 0; index < images.length; index++) {
      const image: unknown = images[index];
      const at = `image ${index + 1}`;
      if (typeof image !== 'object' || image === null || Array.isArray(image)) return problem(`${at} is not an image: expected { data, mediaType }, got ${kindOf(image)}`);
      const outcome = checkImageBytes(image as Record<string, unknown>, at);
      if (!outcome.ok) return outcome;
      total += outcome.value.data.byteLength;
      if (total > RESULT_LIMITS.maxTotalImageBytes) return problem(`the images add up to more than ${formatBytes(RESULT_LIMITS.maxTotalImageBytes)} (the limit per message)`);
      checked.push(outcome.value);
    }
    return { ok: true, value: checked };
  } catch (error) {
    return problem(`reading them threw: ${errorMessage(error)}`);
  }
}

function checkImageBytes(record: Record<string, unknown>, at: string): Outcome<{ data: Uint8Array; mediaType: ImageMediaType }, string> {
  const mediaType = record.mediaType;
  if (typeof mediaType !== 'string' || !(IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
    const hint = mediaType === 'image/jpg' ? " (did you mean 'image/jpeg'?)" : '';
    return problem(`${at} (image): media type ${JSON.stringify(mediaType) ?? 'missing'} is not supported${hint}; use ${IMAGE_MEDIA_TYPES.join(', ')}`);
  }
  const data = record.data;
  let bytes: Uint8Array;
  if (data instanceof Uint8Array) bytes = new Uint8Array(data);
  else if (data instanceof ArrayBuffer) bytes = new Uint8Array(data.slice(0));
  else {
    const advice = typeof data === 'string' ? "; decode base64 first, e.g. Buffer.from(text, 'base64')" : '';
    return problem(`${at} (image): data must be bytes (a Uint8Array or Buffer), got ${kindOf(data)}${advice}`);
  }
  if (bytes.byteLength === 0) return problem(`${at} (image): data is empty`);
  if (bytes.byteLength > RESULT_LIMITS.maxImageBytes) {
    return problem(`${at} (image): ${formatBytes(bytes.byteLength)} is over the ${formatBytes(RESULT_LIMITS.maxImageBytes)} limit per image; scale it down`);
  }
  const sniffed = sniffImage(bytes);
  if (sniffed !== mediaType) {
    const found = sniffed === undefined ? 'not a PNG, JPEG, GIF or WebP image' : `a ${sniffed} image`;
    return problem(`${at} (image): the bytes are ${found}, not ${mediaType}; providers refuse a mismatched media type`);
  }
  return { ok: true, value: { data: bytes, mediaType: mediaType as ImageMediaType } };
}

/** The format an image's first bytes announce, if it is one troupe passes on. */
export function sniffImage(bytes: Uint8Array): ImageMediaType | undefined {
  const starts = (...signature: number[]): boolean => signature.every((byte, index) => bytes[index] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'image/gif';
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp';
  return undefined;
}

/** The bus's description of a checked result: one entry per part, no bytes. */
export function describeParts(result: ToolResult): ResultPartInfo[] {
  return result.parts.map((part): ResultPartInfo => {
    switch (part.type) {
      case 'text':
        return { type: 'text', chars: part.text.length };
      case 'json':
        return { type: 'json', chars: JSON.stringify(part.value).length };
      case 'image':
        return imageInfo(part);
    }
  });
}

/**
 * The images a result sends the model, in order: for a checked result, copies taken when it was
 * checked, which no event hands out.
 */
export function sentImages(result: ToolResult): { data: Uint8Array; mediaType: ImageMediaType }[] {
  return result instanceof RichResult ? RichResult.sentImages(result) : imagesOf(result).map(({ data, mediaType }) => ({ data, mediaType }));
}

/** The images of a checked result, in order. */
export function imagesOf(result: ToolResult): ImagePart[] {
  return result.parts.filter((part): part is ImagePart => part.type === 'image');
}

/** `12.3 KB`: sizes for people and models (1 KB = 1,024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function imageInfo(part: { mediaType: unknown; data: unknown; sha256?: unknown }): ResultPartInfo {
  const data = part.data;
  const bytes = data instanceof Uint8Array || data instanceof ArrayBuffer ? data.byteLength : 0;
  const sha256 = typeof part.sha256 === 'string' ? part.sha256 : '';
  return { type: 'image', mediaType: part.mediaType as ImageMediaType, bytes, sha256 };
}

function isImageLike(part: unknown): part is { mediaType: unknown; data: unknown; sha256?: unknown } {
  return typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'image';
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${(value as object).constructor?.name ?? 'no prototype'})`;
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}
