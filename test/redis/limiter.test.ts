import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { limiterKeys } from '../../src/redis/limiter-scripts.js';
import { openRedisLimiter, type RedisLease, type RedisLimiter } from '../../src/redis/redis-limiter.js';
import { sharedLimit } from '../../src/redis/shared-limit.js';
import { RedisError } from '../../src/redis/redis-error.js';
import { failWithoutRedisUnderCi, findRedis, killOwnConnections, waitFor } from './redis-server.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

const WORKER = fileURLToPath(new URL('fixtures/limiter-worker.ts', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens limiters on one scene and closes them after `body`. */
async function withLimiters<T>(scene: string, count: number, body: (limiters: RedisLimiter[]) => Promise<T>, options: { leaseMs?: number; pollMs?: number } = {}): Promise<T> {
  const limiters = await Promise.all(Array.from({ length: count }, () => openRedisLimiter({ url: redis!.url, scene, pollMs: 100, ...options })));
  try {
    return await body(limiters);
  } finally {
    await Promise.all(limiters.map((limiter) => limiter.close()));
  }
}

function worker(args: string[]): { child: ChildProcess; lines: string[]; closed: Promise<[number | null, string | null]>; stderr: () => string; line(text: string): Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const closed = once(child, 'close') as Promise<[number | null, string | null]>;
  let stderr = '';
  child.stderr!.on('data', (chunk) => void (stderr += String(chunk)));
  const lines: string[] = [];
  const listeners: (() => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const listener of listeners) listener();
  });
  return {
    child,
    lines,
    closed,
    stderr: () => stderr,
    line: (text) =>
      new Promise<void>((resolve, reject) => {
        if (lines.includes(text)) return resolve();
        listeners.push(() => lines.includes(text) && resolve());
        void closed.then(() => reject(new Error(`worker exited before printing ${text}: ${stderr}`)));
      }),
  };
}

describe.runIf(redis !== undefined)('the keyed limiter across processes on Redis', () => {
  const url = redis?.url ?? '';

  it('grants a free slot in one round trip and gives it back in one', async () => {
    await withLimiters(redis!.scene('trips'), 1, async ([limiter]) => {
      const before = limiter!.roundTrips;
      const lease = await limiter!.acquire('model:openai', 2);
      expect(limiter!.roundTrips - before).toBe(1);
      await lease.release();
      expect(limiter!.roundTrips - before).toBe(2);
      await lease.release(); // twice is harmless, and costs nothing more
      expect(limiter!.roundTrips - before).toBe(2);
      expect(await limiter!.held('model:openai')).toBe(0);
    });
  });

  it('never lets more than the limit hold a key across several connections, and serves every waiter', async () => {
    await withLimiters(redis!.scene('many'), 3, async (limiters) => {
      let active = 0;
      let max = 0;
      const calls = limiters.map((limiter) => sharedLimit(limiter, 'tool:search', 3));
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          calls[index % 3]!(async (value: number) => {
            max = Math.max(max, ++active);
            await sleep(15);
            active--;
            return value * 2;
          }, index),
        ),
      );
      expect(results).toEqual(Array.from({ length: 30 }, (_, index) => index * 2));
      expect(max).toBe(3);
      expect(await limiters[0]!.held('tool:search')).toBe(0);
      // Keys are independent: a different key has its own slots.
      const other = await Promise.all([limiters[0]!.acquire('tool:a', 1), limiters[1]!.acquire('tool:b', 1)]);
      expect(await limiters[2]!.held('tool:a')).toBe(1);
      await Promise.all(other.map((lease) => lease.release()));
    });
  }, 20_000);

  it('never lets more than the limit hold a key across three processes', async () => {
    const scene = redis!.scene('procs');
    const workers = Array.from({ length: 3 }, () => worker([url, scene, 'turns', '4', 'work', '6', '40']));
    const exits = await Promise.all(workers.map((each) => each.closed));
    for (const [index, each] of workers.entries()) {
      expect(each.stderr()).toBe('');
      expect(exits[index]![0]).toBe(0);
    }
    const maxima = workers.map((each) => Number(/^max (\d+)$/.exec(each.lines.at(-1) ?? '')?.[1]));
    // Never over the limit, and the limit was reached: 18 calls contended for 4 slots.
    expect(Math.max(...maxima)).toBe(4);
    expect(await redis!.admin.get(`troupe:${scene}:probe`)).toBe('0');
  }, 30_000);

  it('serves waiters first come, first served', async () => {
    const scene = redis!.scene('fifo');
    await withLimiters(scene, 3, async (limiters) => {
      const first = await limiters[0]!.acquire('k', 1);
      const queue = limiterKeys(`troupe:${scene}:limits`, 'k')[1];
      const order: string[] = [];
      const waiting: Promise<RedisLease>[] = [];
      // From three processes' worth of connections, each queued before the next asks.
      for (const [index, name] of ['a', 'b', 'c'].entries()) {
        const lease = limiters[(index + 1) % 3]!.acquire('k', 1);
        waiting.push(
          lease.then(async (held) => {
            order.push(name);
            await sleep(10);
            await held.release();
            return held;
          }),
        );
        await waitForAsync(async () => (await redis!.admin.zcard(queue)) === index + 1, `waiter ${name} queued`);
      }
      await first.release();
      await Promise.all(waiting);
      expect(order).toEqual(['a', 'b', 'c']);
    });
  }, 20_000);

  it('frees the slot of a holder killed with SIGKILL once its lease expires', async () => {
    const scene = redis!.scene('sigkill');
    const holder = worker([url, scene, 'k', '1', 'hold', '0', '0', '1500']);
    await holder.line('held');
    await withLimiters(scene, 1, async ([limiter]) => {
      expect(await limiter!.held('k')).toBe(1);
      let granted = false;
      const waiting = limiter!.acquire('k', 1).then((lease) => {
        granted = true;
        return lease;
      });
      // The holder is alive and heartbeating: its lease outlives several lease periods.
      await sleep(3_500);
      expect(granted).toBe(false);
      const killedAt = Date.now();
      holder.child.kill('SIGKILL');
      const [, signal] = await holder.closed;
      expect(signal).toBe('SIGKILL');
      const lease = await waiting;
      // Freed by expiry: within the lease plus a poll, with a generous margin for a busy machine.
      expect(Date.now() - killedAt).toBeLessThan(10_000);
      expect(await limiter!.held('k')).toBe(1);
      await lease.release();
      expect(await limiter!.held('k')).toBe(0);
    });
  }, 30_000);

  it('drops a waiter killed with SIGKILL from the queue: those behind it are served', async () => {
    const scene = redis!.scene('deadwaiter');
    const [, queue] = limiterKeys(`troupe:${scene}:limits`, 'k');
    await withLimiters(scene, 1, async ([limiter]) => {
      const lease = await limiter!.acquire('k', 1);
      const dead = worker([url, scene, 'k', '1', 'hold', '0', '0', '30000']);
      await waitForAsync(async () => (await redis!.admin.zcard(queue)) === 1, 'the child queued');
      const behind = limiter!.acquire('k', 1);
      await waitForAsync(async () => (await redis!.admin.zcard(queue)) === 2, 'a waiter queued behind the child');
      dead.child.kill('SIGKILL');
      await dead.closed;
      const releasedAt = Date.now();
      await lease.release();
      const next = await behind;
      expect(Date.now() - releasedAt).toBeLessThan(10_000);
      expect(dead.lines).toEqual([]);
      expect(await redis!.admin.zcard(queue)).toBe(0);
      await next.release();
    });
  }, 30_000);

  it('rejects an aborted waiter with its reason, and it takes no slot', async () => {
    const scene = redis!.scene('abort');
    await withLimiters(scene, 2, async ([holderSide, waiterSide]) => {
      const lease = await holderSide!.acquire('k', 1);
      const controller = new AbortController();
      const waiting = waiterSide!.acquire('k', 1, { signal: controller.signal });
      const [, queue] = limiterKeys(`troupe:${scene}:limits`, 'k');
      await waitForAsync(async () => (await redis!.admin.zcard(queue)) === 1, 'the waiter queued');
      const reason = new Error('caller gave up');
      controller.abort(reason);
      await expect(waiting).rejects.toBe(reason);
      await waitForAsync(async () => (await redis!.admin.zcard(queue)) === 0, 'the waiter gone from the queue');
      await lease.release();
      await sleep(300);
      expect(await holderSide!.held('k')).toBe(0);
      // An already aborted signal rejects at once, without a round trip.
      const before = waiterSide!.roundTrips;
      await expect(waiterSide!.acquire('k', 1, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      expect(waiterSide!.roundTrips).toBe(before);
    });
  });

  it('goes on after its connections are killed: releases land, waiters are served, heartbeats resume', async () => {
    const scene = redis!.scene('kill');
    const notices: string[] = [];
    const limiter = await openRedisLimiter({ url, scene, pollMs: 100, leaseMs: 1_500, onNotice: (line) => void notices.push(line) });
    try {
      const lease = await limiter.acquire('k', 1);
      const waiting = limiter.acquire('k', 1);
      const [, queue] = limiterKeys(`troupe:${scene}:limits`, 'k');
      await waitForAsync(async () => (await redis!.admin.zcard(queue)) === 1, 'the waiter queued');
      expect(await killOwnConnections(redis!.admin)).toBe(2);
      // The lease stays held across the drop: heartbeats resume once reconnected.
      await sleep(2_500);
      const [holders] = limiterKeys(`troupe:${scene}:limits`, 'k');
      expect(await redis!.admin.zrange(holders, '0', '-1')).toEqual([lease.id]);
      expect(notices.some((line) => /lost the connection to Redis/.test(line))).toBe(true);
      await lease.release();
      const next = await waiting;
      await next.release();
      expect(await limiter.held('k')).toBe(0);
      expect(lease.lost).toBe(false);
    } finally {
      await limiter.close();
    }
  }, 20_000);

  it('takes its slot again when Redis forgets it (a restart without persistence)', async () => {
    const scene = redis!.scene('forget');
    const limiter = await openRedisLimiter({ url, scene, leaseMs: 600, pollMs: 100 });
    try {
      const lease = await limiter.acquire('k', 2);
      const [holders] = limiterKeys(`troupe:${scene}:limits`, 'k');
      await redis!.admin.del(holders);
      await waitForAsync(async () => (await redis!.admin.zcard(holders)) === 1, 'the lease taken again by a heartbeat');
      expect(lease.lost).toBe(false);
      await lease.release();
      expect(await limiter.held('k')).toBe(0);
    } finally {
      await limiter.close();
    }
  });

  it('rejects what cannot work: a bad limit, a bad key, a closed limiter', async () => {
    const limiter = await openRedisLimiter({ url, scene: redis!.scene('bad') });
    await expect(limiter.acquire('k', 0)).rejects.toThrow(/limit must be a positive integer/);
    await expect(limiter.acquire('', 1)).rejects.toThrow(/key must be a non-empty string/);
    await limiter.close();
    await expect(limiter.acquire('k', 1)).rejects.toThrow(/closed/);
    await expect(openRedisLimiter({ url })).rejects.toThrow(/needs `scene`/);
    await expect(openRedisLimiter({ url: 'redis://127.0.0.1:1', scene: 'x', connectTimeoutMs: 1_000 })).rejects.toBeInstanceOf(RedisError);
  });

  it('says in a RedisError when Redis refuses a grant', async () => {
    const scene = redis!.scene('wrongtype');
    await withLimiters(scene, 1, async ([limiter]) => {
      await redis!.admin.set(limiterKeys(`troupe:${scene}:limits`, 'k')[0], 'not a sorted set');
      const acquired = limiter!.acquire('k', 1);
      await expect(acquired).rejects.toBeInstanceOf(RedisError);
      await expect(acquired).rejects.toThrow(/refused to grant a slot of k: .*WRONGTYPE/);
    });
  });

  it('clearQueue rejects this process’s waiting calls with an AbortError', async () => {
    await withLimiters(redis!.scene('clear'), 1, async ([limiter]) => {
      const limited = sharedLimit(limiter!, 'k', 1);
      let release!: () => void;
      const running = limited(() => new Promise<void>((resolve) => (release = resolve)));
      await waitFor(() => limited.activeCount === 1, 'the first call running');
      const queued = limited(() => 'never');
      await waitFor(() => limited.pendingCount === 1, 'the second call waiting');
      limited.clearQueue();
      await expect(queued).rejects.toMatchObject({ name: 'AbortError' });
      release();
      await running;
      await waitForAsync(async () => (await limiter!.held('k')) === 0, 'the slot given back');
    });
  });
});

async function waitForAsync(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

