import type { Redis } from 'ioredis';
import { CATALOGUE_VERSION } from '../bus/events.js';
import { ConfigError } from '../errors.js';
import { RedisError } from './redis-error.js';

/** The `format` of the header every troupe event stream has beside it. */
export const STREAM_FORMAT = 'troupe-stream';

/**
 * The version of the stream's layout: one entry per envelope, its JSON (with `v`, the catalogue
 * version) in the field `event`, entry ids `<ms>-<n>` chosen by the one writer; the header, a JSON
 * string at `<stream>:header`.
 *
 * Version history:
 * - 1: the first layout.
 */
export const STREAM_VERSION = 1;

/** The field of a stream entry that holds the envelope. */
export const EVENT_FIELD = 'event';

/** What `<stream>:header` holds: which format, which catalogue, which scene. */
export type StreamHeader = { format: typeof STREAM_FORMAT; version: number; catalogue: number; scene: string; createdAt: string };

/** Where a scene's events go: `troupe:<scene>:events`, its header at `troupe:<scene>:events:header`. */
export function streamKeyOf(scene: string): string {
  if (typeof scene !== 'string' || scene.trim() === '') throw new ConfigError(`a scene name is needed for its Redis stream key, got ${JSON.stringify(scene)}`);
  return `troupe:${scene}:events`;
}

/** The keys beside a stream: its header, and the writer's claim on it. */
export function keysOf(stream: string): { stream: string; header: string; writer: string } {
  return { stream, header: `${stream}:header`, writer: `${stream}:writer` };
}

function newHeader(scene: string): StreamHeader {
  return { format: STREAM_FORMAT, version: STREAM_VERSION, catalogue: CATALOGUE_VERSION, scene, createdAt: new Date().toISOString() };
}

/** Reads a stream's header; undefined when there is none yet. Throws when it is not troupe's. */
export async function readHeader(client: Redis, stream: string): Promise<StreamHeader | undefined> {
  const { header } = keysOf(stream);
  let text: string | null;
  try {
    text = await client.get(header);
  } catch (error) {
    if (/WRONGTYPE/.test(String(error))) throw mismatch(stream, `its header key ${header} is not a string`);
    throw error;
  }
  if (text === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw mismatch(stream, `its header ${header} is not JSON: ${JSON.stringify(text.slice(0, 60))}`);
  }
  const found = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (found.format !== STREAM_FORMAT) throw mismatch(stream, `it is not a troupe event stream (header format ${JSON.stringify(found.format) ?? 'missing'}, expected "${STREAM_FORMAT}")`);
  if (found.version !== STREAM_VERSION) throw mismatch(stream, `it is stream format version ${JSON.stringify(found.version)}; this troupe reads version ${STREAM_VERSION}`);
  return found as StreamHeader;
}

/**
 * Checks a header against the scene and catalogue expected. `scene` undefined: any scene.
 * Throws a `redis_stream_mismatch` RedisError naming both.
 */
export function checkHeader(found: StreamHeader, stream: string, scene: string | undefined): void {
  if (found.catalogue !== CATALOGUE_VERSION) {
    throw mismatch(stream, `it holds events of catalogue version ${JSON.stringify(found.catalogue)}, and this troupe speaks version ${CATALOGUE_VERSION}: use another stream, or delete ${stream} and ${keysOf(stream).header}`);
  }
  if (scene !== undefined && found.scene !== scene) {
    throw mismatch(stream, `it belongs to scene ${JSON.stringify(found.scene)}, not ${JSON.stringify(scene)}: give each scene its own stream`);
  }
}

/**
 * A writer's side: creates the header unless there is one (`SET NX`), then checks the one there.
 * A key of another type at the stream's name, or a stream without a header, is refused.
 */
export async function claimHeader(client: Redis, stream: string, scene: string): Promise<StreamHeader> {
  const type = await client.type(stream);
  if (type !== 'none' && type !== 'stream') throw mismatch(stream, `the key is a ${type}, not a stream`);
  const created = await client.set(keysOf(stream).header, JSON.stringify(newHeader(scene)), 'NX');
  if (created === 'OK' && type === 'stream' && (await client.xlen(stream)) > 0) {
    await client.del(keysOf(stream).header);
    throw mismatch(stream, 'it holds entries but no troupe header: it was not written by troupe');
  }
  const header = await readHeader(client, stream);
  if (header === undefined) throw mismatch(stream, 'its header vanished while it was being written');
  checkHeader(header, stream, scene);
  return header;
}

function mismatch(stream: string, why: string): RedisError {
  return new RedisError('redis_stream_mismatch', `Redis stream ${stream} cannot be used: ${why}`);
}
