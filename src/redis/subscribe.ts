import { createBus, type Bus, type EventFilter, type Unsubscribe } from '../bus/bus.js';
import { CATALOGUE_VERSION, type Envelope, type EnvelopeOf, type Pattern } from '../bus/events.js';
import { randomIds } from '../bus/ids.js';
import { ConfigError, errorMessage } from '../errors.js';
import { isConnectionError, openRedis, type OpenedRedis, type RedisConnection } from './connect.js';
import { RedisError } from './redis-error.js';
import { checkHeader, EVENT_FIELD, readHeader, streamKeyOf, type StreamHeader } from './stream-header.js';

export type RedisSubscriptionOptions = RedisConnection & {
  /** The scene to follow: its stream is `troupe:<scene>:events`, and a stream of another scene is refused. */
  scene?: string;
  /** The stream's key, when it is not the scene's default (give `scene` or `stream`, or both). */
  stream?: string;
  /**
   * Where to start: `'start'` (default, the oldest entry Redis still keeps), `'end'` (only what is
   * written from now on), or an entry id (`subscription.lastId` of an earlier subscription):
   * everything after it, so a subscriber that comes back misses nothing Redis still keeps.
   */
  from?: 'start' | 'end' | string;
  /** Entries per read at most (default 1,000). */
  count?: number;
  /** How long one blocking read waits for new entries, in ms (default 2,000); it is read again at once. */
  blockMs?: number;
  /** The subscription stopped: the stream turned out to be another scene's, or an entry could not be read. Default: one line on stderr. */
  onError?: (error: RedisError) => void;
};

/**
 * A Redis stream read as a bus: `on` and `once` take the same patterns and filters as in-process
 * (`'tool.*'`, `'*'`, `{ agent, scene }`), and each handler gets the envelope as it was published
 * (its id, time, scene, agent and cause). `bus` is a local bus the entries are replayed onto, for
 * what takes a bus: `subscribeBuffered` (backpressure policies), `createEventHistory`, the inspector.
 */
export type RedisSubscription = {
  readonly stream: string;
  /** The stream's header, once it has one (a scene that has not started yet has none). */
  readonly header: StreamHeader | undefined;
  /** The local bus the stream's entries are published on, in order. Publishing on it stays local. */
  readonly bus: Bus;
  on<P extends Pattern>(pattern: P, handler: (event: EnvelopeOf<P>) => void, filter?: EventFilter): Unsubscribe;
  once<P extends Pattern>(pattern: P, handler: (event: EnvelopeOf<P>) => void, filter?: EventFilter): Unsubscribe;
  /** The id of the last entry delivered (`'0-0'` before the first): give it as `from` to resume after it. */
  readonly lastId: string;
  /** Entries delivered so far. */
  readonly received: number;
  /**
   * Times it found, starting from an id or coming back after a dropped connection, that entries
   * after its last id may be gone unread: the stream's oldest entry comes after it (retention
   * trimmed past it), or Redis 7 says `XDEL` removed one after it. Each is also said through
   * `onNotice`. A subscriber whose last entry was itself the last one trimmed is counted too.
   */
  readonly gaps: number;
  /** Why the subscription stopped, if it did. */
  readonly failure: RedisError | undefined;
  /** Stops reading and closes its connection. */
  close(): Promise<void>;
};

const ENTRY_ID = /^\d{1,20}(-\d{1,20})?$/;

/**
 * Follows a scene's Redis stream from another process (or this one), on a connection of its own:
 * reads with `XREAD BLOCK` from the last id it saw, and after a dropped connection goes on from
 * there, so it misses nothing Redis still keeps. Reading never slows the scene that writes: the
 * writer only appends. Rejects with a one-line `RedisError` when Redis cannot be reached, refuses
 * the credentials, is too old, or the stream belongs to another scene or catalogue version.
 * Reading starts on the next turn of the event loop: subscribe right after the promise resolves.
 *
 * @example
 * const events = await subscribeRedis({ url: 'redis://127.0.0.1:6379', scene: 'tavern' });
 * events.on('agent.said', (event) => console.log(event.agent, event.data.text));
 * events.on('*', (event) => console.log(event.type), { agent: 'barkeep' });
 * // later: await events.close(); resume with subscribeRedis({ …, from: events.lastId })
 */
export async function subscribeRedis(options: RedisSubscriptionOptions): Promise<RedisSubscription> {
  if (options === null || typeof options !== 'object') throw new ConfigError('subscribeRedis(options) takes an object: { url, scene }');
  const { scene } = options;
  if (scene === undefined && options.stream === undefined) throw new ConfigError('subscribeRedis needs the scene to follow (or its stream\'s key): { url, scene }');
  const stream = options.stream ?? streamKeyOf(scene!);
  const from = options.from ?? 'start';
  if (from !== 'start' && from !== 'end' && !(typeof from === 'string' && ENTRY_ID.test(from))) {
    throw new ConfigError(`subscribeRedis: from must be 'start', 'end' or an entry id like 1732780800000-0, got ${JSON.stringify(from)}`);
  }
  const count = options.count ?? 1_000;
  if (!Number.isSafeInteger(count) || count < 1) throw new ConfigError(`subscribeRedis: count must be a positive integer, got ${String(count)}`);
  const blockMs = options.blockMs ?? 2_000;
  if (!Number.isSafeInteger(blockMs) || blockMs < 1) throw new ConfigError(`subscribeRedis: blockMs must be a positive integer, got ${String(blockMs)}`);
  const onError = options.onError ?? ((error: RedisError) => void process.stderr.write(`troupe: ${error.message}\n`));

  const opened: OpenedRedis = await openRedis(options, 'reader');
  const { client, where } = opened;
  let header: StreamHeader | undefined;
  let lastId = from === 'start' ? '0-0' : from;
  let gaps = 0;
  /**
   * Counts a gap when the stream's oldest entry comes after `lastId` (retention trimmed past it),
   * or Redis says it deleted an entry after `lastId` (`XDEL`): entries may have gone unread.
   */
  const checkGap = async (): Promise<void> => {
    const kept = await keptFrom(client, stream);
    if (kept === undefined) return;
    const trimmed = kept.first !== undefined && compareIds(kept.first, lastId) > 0;
    const deleted = kept.maxDeleted !== undefined && compareIds(kept.maxDeleted, lastId) > 0;
    if (!trimmed && !deleted) return;
    gaps++;
    options.onNotice?.(`Redis stream ${stream} ${trimmed ? `now starts at ${kept.first}` : `lost entries up to ${kept.maxDeleted}`}, after ${lastId}, the last entry this subscriber read: entries may have gone unread (trimmed by retention, or deleted)`);
  };

  try {
    header = await readHeader(client, stream);
    if (header !== undefined) checkHeader(header, stream, scene);
    if (from === 'end') lastId = await topId(client, stream);
    else if (from !== 'start') await checkGap();
  } catch (error) {
    client.disconnect();
    if (error instanceof RedisError) throw error;
    throw new RedisError('redis_failed', `cannot read Redis stream ${stream} at ${where}: ${errorMessage(error)}`, { cause: error });
  }

  // The stream's envelopes are published again with their own ids and times; a local event (a
  // subscriber's `bus.error`) gets an id of this process.
  const localIds = randomIds();
  // Taken once each: the bus asks for the id, then the time, of the envelope it makes.
  let replaying: Envelope | undefined;
  let replayingAt: number | undefined;
  const bus = createBus({
    ids: () => {
      const event = replaying;
      replaying = undefined;
      if (event === undefined) return localIds();
      replayingAt = event.at;
      return event.id;
    },
    clock: () => {
      const at = replayingAt;
      replayingAt = undefined;
      return at ?? Date.now();
    },
  });
  let received = 0;
  let failure: RedisError | undefined;
  let closed = false;

  const fail = (error: RedisError): void => {
    if (failure !== undefined || closed) return;
    failure = error;
    closed = true;
    client.disconnect();
    try {
      onError(error);
    } catch {
      // the host's callback must not stop the reader
    }
  };
  const deliver = (id: string, fields: string[]): void => {
    let text: string | undefined;
    for (let index = 0; index + 1 < fields.length; index += 2) if (fields[index] === EVENT_FIELD) text = fields[index + 1];
    let envelope: (Envelope & { v?: unknown }) | undefined;
    try {
      envelope = text === undefined ? undefined : (JSON.parse(text) as Envelope & { v?: unknown });
    } catch {
      envelope = undefined;
    }
    if (envelope === undefined || typeof envelope.type !== 'string' || typeof envelope.id !== 'string') {
      throw new RedisError('redis_stream_mismatch', `Redis stream ${stream} entry ${id} is not a troupe event: ${JSON.stringify((text ?? JSON.stringify(fields)).slice(0, 80))}`);
    }
    if (envelope.v !== CATALOGUE_VERSION) {
      throw new RedisError('redis_stream_mismatch', `Redis stream ${stream} entry ${id} is an event of catalogue version ${JSON.stringify(envelope.v)}; this troupe speaks version ${CATALOGUE_VERSION}`);
    }
    lastId = id;
    received++;
    const { id: _id, type, at: _at, v: _v, data, scene: eventScene, agent, cause } = envelope as Envelope & { v?: unknown };
    replaying = envelope;
    bus.publish(type, data as never, { scene: eventScene, agent, cause });
  };

  const read = async (): Promise<void> => {
    while (!closed) {
      try {
        const reply = (await opened.whileConnected(client.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', stream, lastId))) as [string, [string, string[]][]][] | null;
        if (reply === null || closed) continue;
        if (header === undefined) {
          // The scene started after we did: its header is there now.
          header = await readHeader(client, stream);
          if (header === undefined) throw new RedisError('redis_stream_mismatch', `Redis stream ${stream} has entries but no troupe header: it was not written by troupe`);
          checkHeader(header, stream, scene);
        }
        for (const [, entries] of reply) for (const [id, fields] of entries) if (!closed) deliver(id, fields);
      } catch (error) {
        if (closed) return;
        if (error instanceof RedisError) return fail(error);
        if (isConnectionError(error)) {
          await opened.untilReady(() => closed);
          if (!closed) await opened.whileConnected(checkGap()).catch(() => undefined);
          continue;
        }
        return fail(new RedisError('redis_failed', `reading Redis stream ${stream} at ${where} failed: ${errorMessage(error).split('\n')[0]}`, { cause: error }));
      }
    }
  };
  // One turn later, so that the caller subscribes to the first entries.
  setImmediate(() => void read());

  return {
    stream,
    get header() {
      return header;
    },
    bus,
    on: (pattern, handler, filter) => bus.on(pattern, handler, filter),
    once: (pattern, handler, filter) => bus.once(pattern, handler, filter),
    get lastId() {
      return lastId;
    },
    get received() {
      return received;
    },
    get gaps() {
      return gaps;
    },
    get failure() {
      return failure;
    },
    async close() {
      if (closed) return;
      closed = true;
      client.disconnect();
    },
  };
}

/** The id of the stream's newest entry, or `0-0` (for `from: 'end'`). */
async function topId(client: OpenedRedis['client'], stream: string): Promise<string> {
  const last = (await client.xrevrange(stream, '+', '-', 'COUNT', 1)) as [string, string[]][];
  return last[0]?.[0] ?? '0-0';
}

/**
 * The stream's oldest entry and, on Redis 7, the highest id `XDEL` removed (`0-0`: none);
 * undefined for a stream not made yet.
 */
async function keptFrom(client: OpenedRedis['client'], stream: string): Promise<{ first: string | undefined; maxDeleted: string | undefined } | undefined> {
  let info: unknown[];
  try {
    info = (await client.xinfo('STREAM', stream)) as unknown[];
  } catch (error) {
    if (/no such key/i.test(errorMessage(error))) return undefined;
    throw error;
  }
  const field = (name: string): unknown => {
    const at = info.indexOf(name);
    return at === -1 ? undefined : info[at + 1];
  };
  const firstEntry = field('first-entry');
  const first = Array.isArray(firstEntry) ? String(firstEntry[0]) : undefined;
  const deleted = field('max-deleted-entry-id');
  return { first, maxDeleted: deleted === undefined || String(deleted) === '0-0' ? undefined : String(deleted) };
}

/** Orders two entry ids (`<ms>-<seq>`, the sequence optional). */
function compareIds(a: string, b: string): number {
  const [aMs = 0n, aSeq = 0n] = a.split('-').map(BigInt);
  const [bMs = 0n, bSeq = 0n] = b.split('-').map(BigInt);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}
