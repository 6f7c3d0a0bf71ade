import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { attachRecorder, type Bus, type Unsubscribe } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import { ConfigError, errorMessage } from '../errors.js';
import { createEventWriter } from '../record/plain-json.js';
import { createRedactor } from '../record/redact.js';
import { isConnectionError, openRedis, type OpenedRedis, type RedisConnection } from './connect.js';
import { RedisError } from './redis-error.js';
import { claimHeader, EVENT_FIELD, keysOf, streamKeyOf, type StreamHeader } from './stream-header.js';

/**
 * How much of the stream Redis keeps: the last `maxLen` entries, or those of the last `maxAgeMs`
 * milliseconds (entry ids are wall-clock times). Trimming is approximate (`~`, whole radix-tree
 * nodes: cheap, may keep a few more) unless `exact`.
 */
export type Retention = { maxLen: number; exact?: boolean } | { maxAgeMs: number; exact?: boolean };

export type RedisBridgeOptions = RedisConnection & {
  /** The scene whose events go to the stream: recorded in its header, and checked by whoever joins it. */
  scene: string;
  /** The stream's key (default `troupe:<scene>:events`). */
  stream?: string;
  /** How much Redis keeps (default: everything; set one for a long-running scene). */
  retention?: Retention;
  /**
   * Events that may wait for Redis while the connection is down (default 100,000). Past it the
   * bridge stops with a `redis_failed` error rather than drop events silently.
   */
  maxBuffered?: number;
  /** Characters of one event's JSON; bigger `data` is replaced by a `$truncated` preview (default 1 MiB). */
  maxEventChars?: number;
  /** Extra secrets to replace by `[redacted]`, besides secret-looking keys and `*_API_KEY`-style env values. */
  redact?: (string | RegExp)[];
  /** The bridge gave up (Redis refused a write, the buffer filled): default, one line on stderr. */
  onError?: (error: RedisError) => void;
};

/** A bus's events on their way to a Redis stream. */
export type RedisBridge = {
  /** The stream's key. */
  readonly stream: string;
  readonly scene: string;
  /** The stream's header (format, catalogue version, scene). */
  readonly header: StreamHeader;
  /** Sends every event `bus` publishes from now on to the stream. Returns the unsubscribe. */
  attach(bus: Bus): Unsubscribe;
  /** Events waiting to be written (all of them while the connection is down). */
  readonly pending: number;
  /** Events written so far. */
  readonly sent: number;
  /** The id of the last entry written, if any. */
  readonly lastId: string | undefined;
  /** Round trips to Redis made to write events (one per batch). */
  readonly batches: number;
  /** Why the bridge stopped, if it did. */
  readonly failure: RedisError | undefined;
  /** Resolves once every event attached so far is in the stream (or the bridge has failed). */
  flush(): Promise<void>;
  /**
   * Stops listening, writes what waits (for up to `timeoutMs`, default 5,000), lets go of the
   * stream and closes the connection. Resolves with how many events could not be written.
   */
  close(options?: { timeoutMs?: number }): Promise<number>;
};

const DEFAULT_MAX_BUFFERED = 100_000;
const DEFAULT_MAX_EVENT_CHARS = 1024 * 1024;
/** Entries per pipeline at most: a burst larger than this takes several round trips. */
const MAX_BATCH = 5_000;
/** The writer's claim on a stream lasts this long, and is renewed three times as often. */
const CLAIM_MS = 15_000;

/** Takes the claim, renews our own, or names the writer holding it. */
const CLAIM_SCRIPT = `local held = redis.call('get', KEYS[1])
if held == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end
if not held then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return held`;
const RELEASE_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/**
 * Sends every event of `bus` to a Redis stream, from now on: `bridgeToRedis(bus, options)` is
 * `openRedisBridge(options)` then `attach(bus)`. Rejects with a one-line `RedisError` when Redis
 * cannot be reached, refuses the credentials, is older than 6.2, or the stream is another scene's.
 *
 * @example
 * const bridge = await bridgeToRedis(scene.bus, { url: 'redis://127.0.0.1:6379', scene: 'tavern' });
 * await scene.run({ ticks: 10 });
 * await bridge.close();
 */
export async function bridgeToRedis(bus: Bus, options: RedisBridgeOptions): Promise<RedisBridge> {
  const bridge = await openRedisBridge(options);
  bridge.attach(bus);
  return bridge;
}

/**
 * Connects and claims the stream (one writer per stream), without a bus yet: attach one before it
 * publishes, so the stream has every event (the CLI opens the bridge, then builds the scene).
 *
 * Writes go out once per turn of the event loop, all events of the turn in one pipeline: a tick
 * costs one round trip, however many events it publishes. The publisher never waits: events are
 * serialized as published and queued. While the connection is down they wait (up to
 * `maxBuffered`) and go out, in order, once it is back; entry ids are chosen by the bridge, so a
 * batch sent again after a drop never lands twice.
 */
export async function openRedisBridge(options: RedisBridgeOptions): Promise<RedisBridge> {
  if (options === null || typeof options !== 'object') throw new ConfigError('openRedisBridge(options) takes an object: { url, scene }');
  const stream = options.stream ?? streamKeyOf(options.scene);
  if (typeof options.scene !== 'string' || options.scene === '') throw new ConfigError('openRedisBridge needs the scene name: { url, scene }');
  const maxBuffered = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
  if (!Number.isSafeInteger(maxBuffered) || maxBuffered < 1) throw new ConfigError(`maxBuffered must be a positive integer, got ${String(maxBuffered)}`);
  const trim = trimArgs(options.retention);
  const write = createEventWriter(createRedactor({ secrets: options.redact ?? [] }), options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS);
  const onError = options.onError ?? ((error: RedisError) => void process.stderr.write(`troupe: ${error.message}\n`));
  const keys = keysOf(stream);
  const token = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  const opened: OpenedRedis = await openRedis(options, 'writer');
  const { client, where } = opened;
  let header: StreamHeader;
  let lastMs = 0;
  let lastSeq = 0;
  const claim = async (): Promise<void> => {
    const held = await client.eval(CLAIM_SCRIPT, 1, keys.writer, token, String(CLAIM_MS));
    if (held !== 1) throw new RedisError('redis_stream_mismatch', `Redis stream ${stream} cannot be used: it is being written by ${String(held)}; one writer per stream (a writer that died lets go within ${CLAIM_MS / 1000} s)`);
  };
  try {
    header = await claimHeader(client, stream, options.scene);
    await claim();
    // Ids go on after the stream's last one, so a second run of the scene appends after the first.
    const last = await lastGeneratedId(client, stream);
    [lastMs, lastSeq] = last;
  } catch (error) {
    client.disconnect();
    if (error instanceof RedisError) throw error;
    throw new RedisError('redis_failed', `cannot set up Redis stream ${stream} at ${where}: ${errorMessage(error)}`, { cause: error });
  }

  let queue: { id: string; text: string }[] = [];
  let queued = 0;
  let sent = 0;
  let batches = 0;
  let lastId: string | undefined;
  let failure: RedisError | undefined;
  let closing = false;
  let closed = false;
  let scheduled = false;
  let inFlight = false;
  let needClaim = false;
  let waiters: { upTo: number; resolve: () => void }[] = [];
  const attachments = new Set<Unsubscribe>();

  const nextId = (): string => {
    const now = Date.now();
    if (now > lastMs) {
      lastMs = now;
      lastSeq = 0;
    } else {
      lastSeq++;
    }
    return `${lastMs}-${lastSeq}`;
  };
  const settle = (): void => {
    if (waiters.length === 0) return;
    const done = failure !== undefined || closed;
    const ready = waiters.filter((waiter) => done || sent >= waiter.upTo);
    waiters = waiters.filter((waiter) => !(done || sent >= waiter.upTo));
    for (const waiter of ready) waiter.resolve();
  };
  const fail = (error: RedisError): void => {
    if (failure !== undefined) return;
    failure = error;
    for (const stop of attachments) stop();
    attachments.clear();
    queue = [];
    settle();
    try {
      onError(error);
    } catch {
      // the host's callback must not break the bus
    }
  };
  const schedule = (): void => {
    if (scheduled || inFlight || failure !== undefined || closed) return;
    scheduled = true;
    setImmediate(() => void send());
  };
  const send = async (): Promise<void> => {
    scheduled = false;
    if (queue.length === 0 || failure !== undefined || closed) return settle();
    inFlight = true;
    try {
      if (needClaim) {
        await opened.whileConnected(claim());
        needClaim = false;
      }
      // A copy: events published while the batch is on its way join the queue, not the batch.
      const batch = queue.slice(0, MAX_BATCH);
      const pipeline = client.pipeline();
      // The retention's arguments once per batch: with `maxAgeMs` they read the clock.
      const trimming = trim();
      for (const entry of batch) pipeline.xadd(stream, ...trimming, entry.id, EVENT_FIELD, entry.text);
      batches++;
      const results = (await opened.whileConnected(pipeline.exec())) ?? [];
      let done = 0;
      let lost = false;
      for (let index = 0; index < batch.length; index++) {
        const error = results[index]?.[0];
        // An id at or below the stream's top: this entry landed before the connection dropped.
        if (error === null || error === undefined || /equal or smaller than the target stream top item/.test(error.message)) {
          done++;
          continue;
        }
        if (isConnectionError(error)) {
          lost = true;
          break;
        }
        throw error;
      }
      if (done > 0) {
        lastId = batch[done - 1]!.id;
        queue = queue.slice(done);
        sent += done;
      }
      if (lost) await reconnected();
    } catch (error) {
      if (error instanceof RedisError) fail(error);
      else if (isConnectionError(error)) await reconnected();
      else fail(new RedisError('redis_failed', `Redis at ${where} refused to write to stream ${stream}: ${errorMessage(error).split('\n')[0]}; the bridge stopped after entry ${lastId ?? '(none)'}`, { cause: error }));
    } finally {
      inFlight = false;
      settle();
      if (queue.length > 0) schedule();
    }
  };
  const reconnected = async (): Promise<void> => {
    needClaim = true;
    await opened.untilReady(() => closed || failure !== undefined);
  };
  const renew = setInterval(() => {
    if (client.status !== 'ready' || inFlight) return;
    claim().catch((error: unknown) => {
      if (error instanceof RedisError) fail(error);
    });
  }, CLAIM_MS / 3);
  renew.unref();

  const record = (event: Envelope): void => {
    if (failure !== undefined || closed) return;
    if (queue.length >= maxBuffered) {
      fail(new RedisError('redis_failed', `${queue.length} events waited for Redis at ${where} (maxBuffered): the bridge to stream ${stream} stopped; the stream ends at entry ${lastId ?? '(none)'}`));
      return;
    }
    queue.push({ id: nextId(), text: write(event) });
    queued++;
    schedule();
  };

  const flush = (): Promise<void> => {
    if (failure !== undefined || closed || sent >= queued) return Promise.resolve();
    schedule();
    const upTo = queued;
    return new Promise((resolve) => waiters.push({ upTo, resolve }));
  };

  return {
    stream,
    scene: options.scene,
    header,
    attach(bus) {
      if (failure !== undefined || closing) throw new ConfigError(`the bridge to Redis stream ${stream} is ${closing ? 'closed' : 'stopped'}: attach before it closes`);
      return attachRecorder(bus, record, attachments);
    },
    get pending() {
      return queue.length;
    },
    get sent() {
      return sent;
    },
    get lastId() {
      return lastId;
    },
    get batches() {
      return batches;
    },
    get failure() {
      return failure;
    },
    flush,
    async close(closeOptions) {
      if (closing) return queue.length;
      closing = true;
      for (const stop of attachments) stop();
      attachments.clear();
      clearInterval(renew);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, closeOptions?.timeoutMs ?? 5_000)))]);
      clearTimeout(timer);
      closed = true;
      const unsent = queue.length;
      queue = [];
      settle();
      if (client.status === 'ready') {
        await client.eval(RELEASE_SCRIPT, 1, keys.writer, token).catch(() => undefined);
        await client.quit().catch(() => undefined);
      }
      client.disconnect();
      return unsent;
    },
  };
}

/** The `MAXLEN`/`MINID` arguments of each XADD. */
function trimArgs(retention: Retention | undefined): () => string[] {
  if (retention === undefined) return () => [];
  if (retention === null || typeof retention !== 'object') throw new ConfigError('retention must be { maxLen } or { maxAgeMs }');
  const how = retention.exact === true ? '=' : '~';
  if ('maxLen' in retention && 'maxAgeMs' in retention) throw new ConfigError('retention takes maxLen or maxAgeMs, not both');
  if ('maxLen' in retention) {
    const { maxLen } = retention;
    if (!Number.isSafeInteger(maxLen) || maxLen < 1) throw new ConfigError(`retention.maxLen must be a positive integer, got ${String(maxLen)}`);
    const args = ['MAXLEN', how, String(maxLen)];
    return () => args;
  }
  const { maxAgeMs } = retention;
  if (!(Number.isFinite(maxAgeMs) && maxAgeMs > 0)) throw new ConfigError(`retention.maxAgeMs must be a number > 0, got ${String(maxAgeMs)}`);
  return () => ['MINID', how, `${Math.max(0, Date.now() - Math.round(maxAgeMs))}-0`];
}

/** The stream's last generated id as `[ms, seq]` (`[0, 0]` for a stream not made yet). */
async function lastGeneratedId(client: OpenedRedis['client'], stream: string): Promise<[number, number]> {
  let info: unknown[];
  try {
    info = (await client.xinfo('STREAM', stream)) as unknown[];
  } catch (error) {
    if (/no such key/i.test(errorMessage(error))) return [0, 0];
    throw error;
  }
  const at = info.indexOf('last-generated-id');
  const id = at === -1 ? '0-0' : String(info[at + 1]);
  const [ms, seq] = id.split('-').map(Number);
  return [ms ?? 0, seq ?? 0];
}
