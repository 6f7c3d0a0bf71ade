import { Redis } from './load-ioredis.js';
import { ConfigError, errorMessage } from '../errors.js';
import { RedisError } from './redis-error.js';

/** The oldest Redis troupe works with: 6.2 brought `XADD … MINID` and `XAUTOCLAIM`. */
export const MIN_REDIS_VERSION = '6.2.0';

/** How long a connection may take at startup, TCP and handshake together, before it is given up. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** How to reach Redis. */
export type RedisConnection = {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). */
  url: string;
  /**
   * Milliseconds the first connection may take (default 5,000). Startup never retries: a wrong
   * address fails at once with a `RedisError`. Once connected, a dropped connection is retried
   * for as long as it takes.
   */
  connectTimeoutMs?: number;
  /**
   * What the connection has to say once it is up: lost and back again. Default: nothing. A
   * `RedisError` the connection cannot recover from goes to the bridge's or subscription's `onError`.
   */
  onNotice?: (message: string) => void;
};

/** A connection open and checked: the client, its URL with the password hidden, the server's version. */
export type OpenedRedis = {
  client: Redis;
  where: string;
  version: string;
  /** The server's `run_id` when the connection opened: another one later means Redis restarted. */
  serverId: string;
  /**
   * Resolves once the connection is ready again and what `checkAfterReconnect` asks holds (or
   * `isClosed()` holds, or the connection is `lost`).
   */
  untilReady(isClosed: () => boolean): Promise<void>;
  /**
   * `reply`, or a rejection with "Connection is closed." as soon as the connection drops: a
   * command in flight when it drops would otherwise wait for ever (nothing is resent). Once the
   * connection is `lost`, a rejection with that error.
   */
  whileConnected<T>(reply: Promise<T>): Promise<T>;
  /** Replies waited for through `whileConnected`: the round trips this process waited on (a pipeline or a script counts one). */
  readonly roundTrips: number;
  /**
   * What must hold each time the connection comes back, before it counts as ready again: `check`
   * runs first thing on the new connection. When it rejects with a `RedisError` (Redis came back
   * without what this process relies on), the connection is `lost`: closed for good, and every
   * wait on it ends with that error. A dropped connection during the check runs it again.
   */
  checkAfterReconnect(check: () => Promise<void>): void;
  /** Why the connection was given up after a reconnection, if it was. */
  readonly lost: RedisError | undefined;
  /** The connection is up and, after a reconnection, checked: what is sent now goes to a Redis known to hold what it should. */
  readonly ready: boolean;
};

/** The URL with its password replaced by `***`, for messages. */
export function hidePassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/([^@/]*)@/, '//***@');
  }
}

/**
 * Opens one connection and checks it: reachable within the timeout, the credentials accepted, a
 * Redis new enough (`INFO server`). Each failure is a one-line `RedisError` with its own code.
 */
export async function openRedis(connection: RedisConnection, role: string): Promise<OpenedRedis> {
  const { url } = connection;
  if (typeof url !== 'string' || !/^rediss?:\/\/./.test(url)) {
    throw new ConfigError(`Redis url must look like redis://host:6379 (or rediss:// for TLS), got ${JSON.stringify(url)}`);
  }
  try {
    new URL(url);
  } catch {
    throw new ConfigError(`Redis url ${JSON.stringify(hidePassword(url))} is not a valid URL`);
  }
  const timeoutMs = connection.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new ConfigError(`connectTimeoutMs must be a number > 0, got ${String(timeoutMs)}`);
  const where = hidePassword(url);
  let started = false;
  let lastError: Error | undefined;
  let down = false;
  let check: (() => Promise<void>) | undefined;
  let checking = false;
  /** Checks started: one left over from a connection that dropped again does not end the current one's. */
  let checks = 0;
  let lost: RedisError | undefined;
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    // At startup, no retry: the caller hears at once. Afterwards, back off up to 2 s and go on.
    retryStrategy: (times) => (started ? Math.min(50 * 2 ** Math.min(times, 6), 2_000) : null),
    maxRetriesPerRequest: null,
    // Commands fail at once while disconnected: the bridge keeps its own buffer and resends it.
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    connectionName: `troupe:${role}:${process.pid}`,
  });
  client.on('error', (error: Error) => {
    lastError = error;
    if (started && !down) {
      down = true;
      connection.onNotice?.(`lost the connection to Redis at ${where}: ${error.message}; reconnecting`);
    }
  });
  client.on('ready', () => {
    if (started && down) {
      connection.onNotice?.(`connected to Redis at ${where} again`);
      // Sent before anything else on the new connection: what it reads is what Redis came back with.
      if (check !== undefined && lost === undefined) {
        const round = ++checks;
        checking = true;
        check().then(
          () => void (round === checks && (checking = false)),
          (error: unknown) => {
            // Dropped again meanwhile: the next `ready` checks again.
            if (isConnectionError(error) && !(error instanceof RedisError)) return void (round === checks && (checking = false));
            checking = false;
            lost ??= error instanceof RedisError ? error : new RedisError('redis_failed', `cannot check Redis at ${where} after reconnecting: ${errorMessage(error)}`, { cause: error });
            client.disconnect();
          },
        );
      }
    }
    down = false;
  });
  client.on('close', () => {
    if (started && !down && client.status !== 'end') {
      down = true;
      connection.onNotice?.(`lost the connection to Redis at ${where}; reconnecting`);
    }
  });

  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisError('redis_unreachable', `cannot reach Redis at ${where}: no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  let info: string;
  try {
    info = await Promise.race([
      (async () => {
        await client.connect();
        return client.info('server');
      })(),
      deadline,
    ]);
  } catch (error) {
    client.disconnect();
    throw startupError(error, lastError, where);
  } finally {
    clearTimeout(timer);
  }
  const version = /^redis_version:(\S+)/m.exec(info)?.[1] ?? '0';
  const serverId = /^run_id:(\S+)/m.exec(info)?.[1] ?? '';
  if (compareVersions(version, MIN_REDIS_VERSION) < 0) {
    client.disconnect();
    throw new RedisError('redis_too_old', `Redis at ${where} is version ${version}; troupe needs ${MIN_REDIS_VERSION} or later (XADD MINID, XAUTOCLAIM)`);
  }
  started = true;
  let roundTrips = 0;
  const usable = (isClosed: () => boolean): boolean => (client.status === 'ready' && !checking) || lost !== undefined || isClosed();
  return {
    client,
    where,
    version,
    get roundTrips() {
      return roundTrips;
    },
    serverId,
    untilReady: (isClosed) =>
      new Promise<void>((resolve) => {
        if (usable(isClosed)) return resolve();
        const poll = setInterval(() => {
          if (usable(isClosed)) {
            clearInterval(poll);
            resolve();
          }
        }, 25);
      }),
    whileConnected<T>(reply: Promise<T>): Promise<T> {
      roundTrips++;
      if (lost !== undefined) {
        reply.catch(() => undefined);
        return Promise.reject(lost);
      }
      let onClose: (() => void) | undefined;
      const dropped = new Promise<never>((_, reject) => {
        onClose = () => reject(new Error('Connection is closed.'));
        if (client.status !== 'ready') onClose();
        else client.once('close', onClose);
      });
      return Promise.race([reply, dropped]).finally(() => client.off('close', onClose!));
    },
    checkAfterReconnect(next) {
      check = next;
    },
    get lost() {
      return lost;
    },
    get ready() {
      return client.status === 'ready' && !checking && lost === undefined;
    },
  };
}

/** The one-line error for a connection that did not come up. */
function startupError(error: unknown, cause: Error | undefined, where: string): RedisError {
  if (error instanceof RedisError) return error;
  const text = `${cause?.message ?? ''} ${errorMessage(error)}`;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (/WRONGPASS|NOAUTH|invalid (username|password)|user is disabled/i.test(text)) {
    return new RedisError('redis_auth_failed', `Redis at ${where} refused the credentials: ${firstLine(cause?.message ?? errorMessage(error))} (check the user and password in the URL)`, { cause: cause ?? error });
  }
  if (/NOPERM/i.test(text)) {
    return new RedisError('redis_auth_failed', `Redis at ${where} does not let this user run INFO, which troupe needs: ${firstLine(text.trim())}`, { cause: cause ?? error });
  }
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused (is redis-server running there?)'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'no such host'
        : code === 'ETIMEDOUT'
          ? 'the connection timed out'
          : /Unknown RESP type|Protocol error/i.test(text)
            ? 'what answers there does not speak the Redis protocol'
            : firstLine((cause?.message ?? errorMessage(error)).trim());
  return new RedisError('redis_unreachable', `cannot reach Redis at ${where}: ${why}`, { cause: cause ?? error });
}

function firstLine(text: string): string {
  return text.split('\n')[0]!;
}

/** `a` before `b`: negative; dotted numeric versions, missing parts as 0. */
export function compareVersions(a: string, b: string): number {
  const left = a.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const right = b.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const diff = (left[index] ?? 0) - (right[index] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** True for an error that means the connection is down, not that Redis refused the command. */
export function isConnectionError(error: unknown): boolean {
  const message = errorMessage(error);
  return /Connection is closed|Stream isn't writeable|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|enableOfflineQueue|Connection lost|socket/i.test(message);
}
