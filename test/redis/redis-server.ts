import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from '../../src/redis/load-ioredis.js';
import { it } from 'vitest';

/**
 * A Redis for the tests of test/redis/: `REDIS_URL` when set; else whatever answers on
 * 127.0.0.1:6379; else a `redis-server` from PATH started on a free port in a temporary folder
 * (no persistence) and stopped after (`TROUPE_TEST_REDIS=spawn` starts one even when 6379
 * answers). When there is none, the tests say so loudly and, under
 * `CI=true`, fail instead of being skipped.
 */
export type TestRedis = {
  url: string;
  /** Where it came from. */
  origin: 'REDIS_URL' | '127.0.0.1:6379' | 'redis-server';
  /** A connection for the test itself (ACL users, CLIENT KILL, cleanup). */
  admin: Redis;
  /** A prefix unique to this run: scene names start with it, so keys never collide. */
  prefix: string;
  /** A scene name unique to this run. */
  scene(name: string): string;
  /** Deletes every key this run made, closes the admin connection, stops a server it started. */
  stop(): Promise<void>;
};

const BANNER = (why: string): string => `
################################################################################
#  REDIS TESTS DID NOT RUN: ${why.padEnd(51)}#
#  Set REDIS_URL, run redis-server on 127.0.0.1:6379, or put redis-server on   #
#  PATH. Under CI=true this is a failure.                                      #
################################################################################`;

const OWN_BANNER = (why: string): string => `
################################################################################
#  REDIS RESTART TESTS DID NOT RUN: ${why.padEnd(43)}#
#  They crash and restart a redis-server of their own (never a shared one):    #
#  put redis-server on PATH. Under CI=true this is a failure.                  #
################################################################################`;

/** Finds or starts a Redis; undefined (after a loud warning) when there is none. */
export async function findRedis(): Promise<TestRedis | undefined> {
  const given = process.env.REDIS_URL;
  if (given !== undefined && given !== '') {
    if (!(await answers(given))) throw new Error(`REDIS_URL=${given} is set but nothing answers PING there`);
    return ready(given, 'REDIS_URL');
  }
  // TROUPE_TEST_REDIS=spawn: a server of the run's own even when 6379 answers.
  if (process.env.TROUPE_TEST_REDIS !== 'spawn' && (await answers('redis://127.0.0.1:6379'))) return ready('redis://127.0.0.1:6379', '127.0.0.1:6379');
  const which = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (which.status !== 0) {
    console.warn(BANNER('no REDIS_URL, nothing on 6379, no redis-server'));
    return undefined;
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'troupe-redis-'));
  const server = await launch(port, dir, ['--save', '', '--appendonly', 'no']);
  if (server === undefined) {
    rmSync(dir, { recursive: true, force: true });
    console.warn(BANNER(`redis-server did not start on port ${port}`));
    return undefined;
  }
  return ready(`redis://127.0.0.1:${port}`, 'redis-server', server, dir);
}

/**
 * A redis-server of a test's own, never the shared one: on a free port, in a temporary folder,
 * started with `config` (its persistence, say). It can crash and start again on the same port and
 * folder, so what it reloads is what its persistence kept.
 */
export type OwnRedis = {
  url: string;
  dir: string;
  /** A connection for the test itself; it reconnects after a restart. */
  admin: Redis;
  /** SIGKILL, as a crash: nothing is written on the way out, what is on disk is what it kept. */
  crash(): Promise<void>;
  /** Starts it again on the same port and folder, with the same config; resolves once it answers PING. */
  restart(): Promise<void>;
  /** Stops it and deletes its folder. */
  stop(): Promise<void>;
};

/**
 * Starts an `OwnRedis` with `config` (redis-server flags, e.g. `['--appendonly', 'yes']`) from
 * `redis-server` on PATH; undefined, after a loud warning, when there is none or it does not start
 * (see `failWithoutRedisUnderCi`). `REDIS_URL` and a server on 6379 do not serve here: a test that
 * crashes its Redis needs one of its own.
 */
export async function startOwnRedis(config: readonly string[]): Promise<OwnRedis | undefined> {
  if (spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status !== 0) {
    console.warn(OWN_BANNER('no redis-server on PATH'));
    return undefined;
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'troupe-redis-'));
  let server = await launch(port, dir, config);
  if (server === undefined) {
    rmSync(dir, { recursive: true, force: true });
    console.warn(OWN_BANNER(`redis-server did not start on port ${port}`));
    return undefined;
  }
  const url = `redis://127.0.0.1:${port}`;
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  admin.on('error', () => undefined);
  await admin.connect();
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    const running = server;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };
  return {
    url,
    dir,
    admin,
    crash: () => kill('SIGKILL'),
    async restart() {
      await kill('SIGKILL');
      server = await launch(port, dir, config);
      if (server === undefined) throw new Error(`redis-server did not start again on port ${port} in ${dir}`);
    },
    async stop() {
      admin.disconnect();
      await kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts redis-server on `port` in `dir` with `config`; the process once it answers PING, else undefined. */
async function launch(port: number, dir: string, config: readonly string[]): Promise<ChildProcess | undefined> {
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...config], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 100 && server.exitCode === null && !(await answers(url)); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
  if (server.exitCode === null && (await answers(url))) return server;
  server.kill();
  return undefined;
}

/**
 * Call at the top of a test file with what `findRedis` gave: without a Redis under `CI=true`, adds
 * a test that fails, so a CI machine without Redis cannot pass by skipping.
 */
export function failWithoutRedisUnderCi(redis: TestRedis | OwnRedis | undefined, missing = 'no Redis: set REDIS_URL, run redis-server on 127.0.0.1:6379, or put redis-server on PATH'): void {
  if (redis === undefined && process.env.CI === 'true') {
    it('has a Redis to run against (CI=true: the Redis tests must run)', () => {
      throw new Error(missing);
    });
  }
}

async function ready(url: string, origin: TestRedis['origin'], server?: ChildProcess, dir?: string): Promise<TestRedis> {
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  admin.on('error', () => undefined);
  await admin.connect();
  const prefix = `t${randomBytes(4).toString('hex')}`;
  return {
    url,
    origin,
    admin,
    prefix,
    scene: (name) => `${prefix}-${name}`,
    async stop() {
      try {
        let cursor = '0';
        do {
          const [next, keys] = await admin.scan(cursor, 'MATCH', `troupe:${prefix}-*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await admin.del(...keys);
        } while (cursor !== '0');
      } finally {
        admin.disconnect();
        if (server !== undefined) {
          server.kill();
          await new Promise((resolve) => server.once('exit', resolve));
        }
        if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** True when a Redis answers PING at `url` within a second. */
async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1_000, retryStrategy: () => null, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A TCP server that speaks just enough RESP to pass for a Redis of `version` (every command
 * answers OK, INFO answers the version), or with `silent`, accepts and never answers.
 */
export async function fakeRedis(how: { version: string } | { silent: true }): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if ('silent' in how) return;
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        const parsed = parseCommand(buffer);
        if (parsed === undefined) return;
        buffer = buffer.slice(parsed.used);
        const name = parsed.words[0]?.toUpperCase();
        if (name === 'INFO') {
          const text = `# Server\r\nredis_version:${how.version}\r\nredis_mode:standalone\r\n`;
          socket.write(`$${Buffer.byteLength(text)}\r\n${text}\r\n`);
        } else socket.write('+OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One RESP array of bulk strings from the front of `text`, or undefined while it is incomplete. */
function parseCommand(text: string): { words: string[]; used: number } | undefined {
  if (!text.startsWith('*')) return undefined;
  let at = text.indexOf('\r\n');
  if (at === -1) return undefined;
  const count = Number(text.slice(1, at));
  let position = at + 2;
  const words: string[] = [];
  for (let index = 0; index < count; index++) {
    at = text.indexOf('\r\n', position);
    if (at === -1) return undefined;
    const length = Number(text.slice(position + 1, at));
    const start = at + 2;
    if (text.length < start + length + 2) return undefined;
    words.push(text.slice(start, start + length));
    position = start + length + 2;
  }
  return { words, used: position };
}

/** Polls `check` until it holds (or throws after `timeoutMs`). */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `CLIENT KILL` on this process's troupe connections (named `troupe:…:<pid>`), leaving those of
 * other processes sharing the server alone; returns how many were killed.
 */
export async function killOwnConnections(admin: Redis): Promise<number> {
  const list = (await admin.client('LIST')) as string;
  let killed = 0;
  for (const line of list.split('\n')) {
    const name = /\bname=(\S+)/.exec(line)?.[1];
    const id = /\bid=(\d+)/.exec(line)?.[1];
    if (name === undefined || id === undefined || !name.startsWith('troupe:') || !name.endsWith(`:${process.pid}`)) continue;
    await admin.client('KILL', 'ID', id);
    killed++;
  }
  return killed;
}
