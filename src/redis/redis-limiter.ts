import { randomUUID } from 'node:crypto';
import { ConfigError, errorMessage } from '../errors.js';
import { isConnectionError, openRedis, type OpenedRedis, type RedisConnection } from './connect.js';
import { defineLimiterScripts, limiterKeys, type LimiterClient, type LimiterPipeline } from './limiter-scripts.js';
import { RedisError } from './redis-error.js';

export type RedisLimiterOptions = RedisConnection & {
  /** Where the limiter's keys go: `troupe:<scene>:limits` (or `prefix`). */
  scene?: string;
  /** Key prefix, instead of the one `scene` gives. */
  prefix?: string;
  /**
   * How long a lease lasts without a heartbeat (default 30,000 ms). Held leases are renewed every
   * third of it; a process killed outright frees its slots this long after its last heartbeat.
   */
  leaseMs?: number;
  /**
   * The longest a waiter goes without asking again when no wake-up comes (default 1,000 ms): it
   * bounds how late a slot freed by an expired lease is noticed. A waiter that misses three polls
   * (a dead process) leaves the queue.
   */
  pollMs?: number;
  /** A lease lost (it expired and its slot was taken meanwhile), or a release that could not be sent. */
  onNotice?: (message: string) => void;
};

/** A slot held: until `release()`, or until its lease expires after this process dies. */
export type RedisLease = {
  readonly key: string;
  readonly id: string;
  /** True once a heartbeat found the slot taken by someone else: the limit may be passed by one. */
  readonly lost: boolean;
  /** Gives the slot back (twice is harmless). Never rejects: an unsendable release lets the lease expire. */
  release(): Promise<void>;
};

/** A keyed counting semaphore shared by every process on the same Redis and prefix. */
export type RedisLimiter = {
  readonly prefix: string;
  /**
   * Waits for one of `limit` slots of `key`; rejects with `signal.reason` when aborted first. A
   * dropped connection is waited out, not thrown. Waiters are served first come, first served.
   */
  acquire(key: string, limit: number, options?: { signal?: AbortSignal }): Promise<RedisLease>;
  /** Slots of `key` held now, across all processes. */
  held(key: string): Promise<number>;
  /** Round trips made on the command connection (each script call or pipeline counts one). */
  readonly roundTrips: number;
  /** Releases what this process holds, rejects its waiters, closes both connections. */
  close(): Promise<void>;
};

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_POLL_MS = 1_000;

type Waiter = {
  id: string;
  key: string;
  limit: number;
  resolve: (lease: RedisLease) => void;
  reject: (reason: unknown) => void;
  done: boolean;
};

type Held = { id: string; key: string; limit: number; lost: boolean };

/**
 * Opens a limiter: one connection for its scripts and heartbeats, one that blocks on this
 * process's wake-up list. Rejects with a `RedisError` when Redis cannot be reached.
 *
 * Round trips: an acquire with a slot free costs one; a waiting one, one more per wake-up or
 * poll (all of this process's waiters of the woken key share one pipeline); a release one;
 * heartbeats one per third of `leaseMs` for every lease this process holds.
 */
export async function openRedisLimiter(options: RedisLimiterOptions): Promise<RedisLimiter> {
  if (options === null || typeof options !== 'object') throw new ConfigError('openRedisLimiter(options) takes an object: { url, scene }');
  const prefix = options.prefix ?? (typeof options.scene === 'string' && options.scene !== '' ? `troupe:${options.scene}:limits` : undefined);
  if (prefix === undefined || prefix === '') throw new ConfigError('openRedisLimiter needs `scene` (or `prefix`) to name its keys');
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 300) throw new ConfigError(`leaseMs must be an integer ≥ 300, got ${String(leaseMs)}`);
  if (!Number.isSafeInteger(pollMs) || pollMs < 10) throw new ConfigError(`pollMs must be an integer ≥ 10, got ${String(pollMs)}`);
  const waitMs = 3 * pollMs;
  // Keys outlive every lease and queued waiter, and vanish by themselves once a scene is gone.
  const keepMs = 2 * Math.max(leaseMs, waitMs);
  const notice = options.onNotice ?? (() => undefined);

  const command = await openRedis(options, 'limiter');
  let blocking: OpenedRedis;
  try {
    blocking = await openRedis(options, 'limiter-wait');
  } catch (error) {
    command.client.disconnect();
    throw error;
  }
  const client: LimiterClient = defineLimiterScripts(command.client);
  // Each command in flight listens for the connection's close (`whileConnected`): many at once is normal.
  command.client.setMaxListeners(0);
  const instance = randomUUID().replaceAll('-', '').slice(0, 16);
  const wakePrefix = `${prefix}:wake:`;
  const wakeList = `${wakePrefix}${instance}`;
  let counter = 0;
  let roundTrips = 0;
  let closed = false;
  const waiters = new Map<string, Waiter>();
  const held = new Map<string, Held>();
  const due = new Set<Waiter>();
  let attempting = false;
  let listening = false;

  const failed = (what: string, error: unknown): RedisError =>
    new RedisError('redis_failed', `Redis at ${command.where} refused to ${what}: ${errorMessage(error).split('\n')[0]}`, { cause: error });

  const settle = (waiter: Waiter): void => {
    waiter.done = true;
    waiters.delete(waiter.id);
    due.delete(waiter);
  };

  const grant = (waiter: Waiter): void => {
    settle(waiter);
    const lease: Held = { id: waiter.id, key: waiter.key, limit: waiter.limit, lost: false };
    held.set(lease.id, lease);
    let released: Promise<void> | undefined;
    waiter.resolve({
      key: lease.key,
      id: lease.id,
      get lost() {
        return lease.lost;
      },
      release: () => (released ??= giveBack(lease.key, lease.id, 'release')),
    });
  };

  /** Sends a release (or a waiter's cancel) until it lands or the lease would have expired anyway. */
  const giveBack = async (key: string, id: string, what: 'release' | 'cancel'): Promise<void> => {
    held.delete(id);
    const until = Date.now() + leaseMs;
    while (Date.now() < until) {
      if (command.client.status !== 'ready') {
        // Closing while disconnected: the lease expires by itself.
        if (closed) return;
        await command.untilReady(() => closed || Date.now() >= until);
        continue;
      }
      try {
        roundTrips++;
        await command.whileConnected(client.troupeLimiterRelease(...limiterKeys(prefix, key), wakePrefix, key, id, keepMs));
        return;
      } catch (error) {
        if (isConnectionError(error)) {
          await pause(25);
          continue;
        }
        notice(`could not ${what} ${key} lease ${id} (${errorMessage(error).split('\n')[0]}); it expires within ${leaseMs} ms`);
        return;
      }
    }
    notice(`could not ${what} ${key} lease ${id} while Redis was unreachable; it has expired`);
  };

  /** Asks Redis for every due waiter, one pipeline per batch, until none is due. */
  const attempt = async (): Promise<void> => {
    if (attempting) return;
    attempting = true;
    try {
      while (due.size > 0 && !closed) {
        if (command.client.status !== 'ready') {
          await command.untilReady(() => closed);
          continue;
        }
        const batch = [...due];
        due.clear();
        const pipeline = client.pipeline() as LimiterPipeline;
        for (const waiter of batch) {
          pipeline.troupeLimiterAcquire(...limiterKeys(prefix, waiter.key), wakePrefix, waiter.key, waiter.id, waiter.limit, leaseMs, waitMs, keepMs);
        }
        roundTrips++;
        let results: [Error | null, unknown][];
        try {
          results = (await command.whileConnected(pipeline.exec())) ?? [];
        } catch (error) {
          for (const waiter of batch) {
            if (waiter.done) continue;
            if (isConnectionError(error)) due.add(waiter);
            else {
              settle(waiter);
              waiter.reject(failed(`grant a slot of ${waiter.key}`, error));
            }
          }
          // The drop may not show in `status` yet: a pause, not a spin.
          if (isConnectionError(error)) await pause(25);
          continue;
        }
        batch.forEach((waiter, index) => {
          const [error, reply] = results[index] ?? [new Error('Connection is closed.'), undefined];
          if (waiter.done) return; // aborted meanwhile: its cancel, sent after this, undoes a grant
          if (error !== null) {
            if (isConnectionError(error)) due.add(waiter);
            else {
              settle(waiter);
              waiter.reject(failed(`grant a slot of ${waiter.key}`, error));
            }
          } else if ((reply as number[])[0] === 1) grant(waiter);
        });
      }
    } catch (error) {
      for (const waiter of [...due]) {
        settle(waiter);
        waiter.reject(failed('grant a slot', error));
      }
    } finally {
      attempting = false;
      if (due.size > 0 && !closed) void attempt();
      if (waiters.size > 0) void listen();
    }
  };

  const nudge = (which: Iterable<Waiter>): void => {
    for (const waiter of which) if (!waiter.done) due.add(waiter);
    void attempt();
  };

  /**
   * Blocks on this process's wake-up list while anyone waits. A wake-up names a key: its waiters
   * ask again. No wake-up within `pollMs`: every waiter asks again, which also keeps its place.
   */
  const listen = async (): Promise<void> => {
    if (listening) return;
    listening = true;
    try {
      let polled = Date.now();
      while (waiters.size > 0 && !closed) {
        let woken: string | undefined;
        try {
          const reply = await blocking.whileConnected(blocking.client.blpop(wakeList, pollMs / 1000));
          woken = reply?.[1];
        } catch (error) {
          if (closed) return;
          if (!isConnectionError(error)) notice(`waiting for a wake-up failed: ${errorMessage(error).split('\n')[0]}; polling`);
          await Promise.race([blocking.untilReady(() => closed), new Promise((resolve) => setTimeout(resolve, pollMs))]);
        }
        // Wake-ups for one key never starve the others' polls (which also keep their places).
        if (woken === undefined || Date.now() - polled >= pollMs) {
          polled = Date.now();
          nudge(waiters.values());
        } else nudge([...waiters.values()].filter((waiter) => waiter.key === woken));
      }
    } finally {
      listening = false;
    }
  };

  /** Renews every lease this process holds, one pipeline for all of them. */
  const heartbeat = async (): Promise<void> => {
    if (held.size === 0 || command.client.status !== 'ready') return;
    const leases = [...held.values()];
    const pipeline = client.pipeline() as LimiterPipeline;
    for (const lease of leases) pipeline.troupeLimiterRenew(...limiterKeys(prefix, lease.key), wakePrefix, lease.key, lease.id, lease.limit, leaseMs, keepMs);
    roundTrips++;
    const results = (await command.whileConnected(pipeline.exec()).catch(() => null)) ?? [];
    leases.forEach((lease, index) => {
      const [error, reply] = results[index] ?? [null, undefined];
      if (error !== null || reply === undefined || !held.has(lease.id)) return;
      if (reply === 0 && !lease.lost) {
        lease.lost = true;
        notice(`lease ${lease.id} on ${lease.key} expired and its slot was taken: ${lease.key} may run one over its limit until it is released`);
      } else if (reply !== 0) lease.lost = false;
    });
  };
  const beat = setInterval(() => void heartbeat(), Math.floor(leaseMs / 3));
  beat.unref();

  return {
    prefix,
    get roundTrips() {
      return roundTrips;
    },
    acquire(key, limit, acquireOptions) {
      if (typeof key !== 'string' || key === '') return Promise.reject(new ConfigError('acquire(key, limit): key must be a non-empty string'));
      if (!Number.isSafeInteger(limit) || limit < 1) return Promise.reject(new ConfigError(`acquire("${key}", limit): limit must be a positive integer, got ${String(limit)}`));
      if (closed) return Promise.reject(new ConfigError(`the Redis limiter ${prefix} is closed`));
      const signal = acquireOptions?.signal;
      if (signal?.aborted === true) return Promise.reject(signal.reason);
      return new Promise<RedisLease>((resolve, reject) => {
        const onAbort = (): void => {
          if (waiter.done) return;
          settle(waiter);
          reject(signal!.reason);
          // Leaves the queue, and gives back a grant that was on its way.
          void giveBack(key, waiter.id, 'cancel');
        };
        const waiter: Waiter = {
          id: `${instance}:${++counter}`,
          key,
          limit,
          resolve: (lease) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(lease);
          },
          reject: (reason) => {
            signal?.removeEventListener('abort', onAbort);
            reject(reason);
          },
          done: false,
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.set(waiter.id, waiter);
        nudge([waiter]);
      });
    },
    async held(key) {
      roundTrips++;
      return command.whileConnected(client.troupeLimiterHeld(limiterKeys(prefix, key)[0]));
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(beat);
      for (const waiter of [...waiters.values()]) {
        settle(waiter);
        waiter.reject(new DOMException(`the Redis limiter ${prefix} closed while waiting for ${waiter.key}`, 'AbortError'));
        void giveBack(waiter.key, waiter.id, 'cancel');
      }
      if (held.size > 0 && command.client.status === 'ready') {
        const pipeline = client.pipeline() as LimiterPipeline;
        for (const lease of held.values()) pipeline.troupeLimiterRelease(...limiterKeys(prefix, lease.key), wakePrefix, lease.key, lease.id, keepMs);
        held.clear();
        roundTrips++;
        await command.whileConnected(pipeline.exec()).catch(() => undefined);
      }
      blocking.client.disconnect();
      await command.client.quit().catch(() => undefined);
      command.client.disconnect();
    },
  };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
