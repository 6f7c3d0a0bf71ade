import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/bus/index.js';
import { streamKeyOf } from '../../src/redis/index.js';
import { scene as counters } from './fixtures/counters-scene.js';
import { failWithoutRedisUnderCi, startOwnRedis, type OwnRedis } from './redis-server.js';
import { askedCalls, COUNTERS, eventually, holdFile, runInProcess, streamEvents, troupe, type Troupe } from './worker-processes.js';

/**
 * A real Redis restart under a run across workers. Each test has a redis-server of its own (never
 * the shared one), crashes it with SIGKILL while a tick's calls are in flight, and starts it again
 * on the same port and folder: what the run finds then is what that server's persistence kept.
 */

// appendfsync always: Redis writes and fsyncs the append-only file before it answers a write, so
// a crash loses nothing it acknowledged. (everysec may lose the last second of acknowledged
// writes: to the run, a rollback, which the snapshot test shows.)
const aof = await startOwnRedis(['--appendonly', 'yes', '--appendfsync', 'always', '--save', '']);
// Neither an append-only file nor snapshots: a restart comes back empty.
const bare = aof === undefined ? undefined : await startOwnRedis(['--appendonly', 'no', '--save', '']);
// Snapshots only, taken when the test says (SAVE): a restart comes back as of the last one.
const rdb = aof === undefined ? undefined : await startOwnRedis(['--appendonly', 'no', '--save', '']);
failWithoutRedisUnderCi(aof, 'no redis-server on PATH: the restart tests crash and restart a redis-server of their own');
afterAll(async () => {
  for (const redis of [aof, bare, rdb]) await redis?.stop();
});

/** The processes a test started: any still running when it ends (it failed) are killed. */
const started: Troupe[] = [];
afterEach(() => {
  for (const process of started.splice(0)) if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGKILL');
});

const AGENTS = 8;
const TICKS = 8;

/** The counters scene on a coordinator and two workers; from tick 3 on, its calls wait while `hold` exists. */
/**
 * Starts the run on two workers and waits until tick 3's calls are journaled as started and held
 * by the hold file: the moment each test crashes Redis. The caller releases `hold`; a run that
 * never gets there is released here.
 */
async function startHeldAtTick3(
  redis: OwnRedis,
  name: string,
  ids: readonly string[],
  ticks = TICKS,
): Promise<{ coordinator: Troupe; workers: Troupe[]; all: Troupe[]; hold: ReturnType<typeof holdFile> }> {
  const hold = holdFile();
  const workers = ids.map((id) => troupe(['worker', '--redis', redis.url, '--scene', name, '--once', '--id', id]));
  const coordinator = troupe(['run', COUNTERS, '--redis', redis.url, '--workers', '2', '--wait-workers', '--redis-name', name, '--partitions', '4', '--seed', '2', '--ticks', String(ticks), '--npcs', String(AGENTS), '--delay-ms', '20', '--hold-file', hold.path, '--hold-at', '3', '--quiet']);
  const all = [coordinator, ...workers];
  started.push(...all);
  try {
    await eventually(() => callsStarted(redis, name, 3), 'the calls of tick 3 to start');
  } catch (error) {
    hold.release();
    throw error;
  }
  return { coordinator, workers, all, hold };
}

/** Every agent's call of tick `tick` is journaled as started: the tick is in flight, its calls held (a tick not held may pass unseen). */
async function callsStarted(redis: OwnRedis, name: string, tick: number): Promise<boolean> {
  let count = 0;
  for (let p = 0; p < 4; p++) {
    for (const [, fields] of await redis.admin.xrange(`troupe:${name}:journal:${p}`, '-', '+')) {
      const field = (key: string) => fields[fields.indexOf(key) + 1];
      if (field('kind') === 'started' && Number(field('tick')) === tick) count++;
    }
  }
  return count === AGENTS;
}

/** The run's events stream has the coordinator's `scene.tick` of `tick`: it has committed that tick. */
async function ticked(redis: OwnRedis, name: string, tick: number): Promise<boolean> {
  return (await streamEvents(redis.admin, streamKeyOf(name))).some((event) => event.type === 'scene.tick' && (event as Envelope<'scene.tick'>).data.tick === tick);
}

/** The server's run_id: another one after `crashAndRestart` shows it was a new process, not a dropped connection. */
async function serverId(redis: OwnRedis): Promise<string> {
  return /^run_id:(\w+)/m.exec(await redis.admin.info('server'))![1]!;
}

/** SIGKILL, a moment's pause, then the server again on the same port and folder. */
async function crashAndRestart(redis: OwnRedis): Promise<void> {
  const before = await serverId(redis);
  await redis.crash();
  await new Promise((resolve) => setTimeout(resolve, 300));
  await redis.restart();
  expect(await serverId(redis)).not.toBe(before);
}

/** The one line a process ends with when Redis came back without its run (`redis_run_lost`). */
const lostLine = (prefix: string, url: string, name: string, what: string) =>
  new RegExp(`^${prefix}Redis at ${url} restarted \\(up \\d+ s, AOF off\\): run \\w+ of scene "${name}" ${what}; the run cannot go on \\(start a new one; appendfsync always keeps a run across a restart\\)$`);

/** Every process of the run exits 1, its last line the `redis_run_lost` error saying `what`. */
async function expectEveryProcessLost(coordinator: Troupe, workers: readonly Troupe[], url: string, name: string, what: string): Promise<void> {
  expect(await coordinator.exited, coordinator.stderr()).toBe(1);
  for (const worker of workers) expect(await worker.exited, worker.stderr()).toBe(1);
  expect(coordinator.stderr().trim().split('\n').at(-1)).toMatch(lostLine('troupe: ', url, name, what));
  for (const worker of workers) expect(worker.stderr().trim().split('\n').at(-1)).toMatch(lostLine('troupe worker: ', url, name, what));
}

describe.runIf(aof !== undefined)('a Redis restart under a run across workers', () => {
  it('with appendonly yes and appendfsync always: every process reconnects, and the run ends as it would in one process', async () => {
    const redis = aof!;
    const name = 'restart-aof';
    // Tick 3's calls are journaled as started and wait: the crash comes in the middle of the tick.
    const { coordinator, workers, all, hold } = await startHeldAtTick3(redis, name, ['a1', 'a2']);
    try {
      await crashAndRestart(redis);
      await eventually(async () => all.every((process) => /connected to Redis at \S+ again/.test(process.stderr())), 'every process to reconnect');
    } finally {
      hold.release();
    }
    // Once more, wherever the run is when tick 5 has begun: commits, world writes and leases may be in flight.
    await eventually(() => ticked(redis, name, 5), 'tick 5', 30_000, 5);
    await crashAndRestart(redis);
    expect(await coordinator.exited, coordinator.stderr()).toBe(0);
    for (const worker of workers) expect(await worker.exited, worker.stderr()).toBe(0);
    for (const process of all) expect(process.stderr()).toMatch(/lost the connection to Redis/);

    const alone = await runInProcess(counters, 2, { npcs: AGENTS, 'delay-ms': 20, 'hold-file': '', 'hold-at': 1 }, TICKS);
    expect(coordinator.stdout().trim()).toBe(alone.summary);
    const events = await streamEvents(redis.admin, streamKeyOf(name));
    expect(askedCalls(events)).toEqual(askedCalls(alone.events));
    expect(events.filter((event) => event.type === 'scene.tick').map((event) => (event as Envelope<'scene.tick'>).data.tick)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // Every call completed once and none was cut off: the calls in flight at the crashes went on.
    expect(events.filter((event) => event.type === 'tool.completed')).toHaveLength(AGENTS * TICKS);
    expect(events.filter((event) => event.type === 'tool.interrupted' || event.type === 'tool.failed')).toEqual([]);
    expect(events.at(-1)?.type).toBe('scene.stopped');
  }, 30_000);

  it('without persistence: the run\'s keys are gone, and every process stops saying so in one line, writing nothing', async () => {
    const redis = bare!;
    const name = 'restart-bare';
    const { coordinator, workers, all, hold } = await startHeldAtTick3(redis, name, ['b1', 'b2']);
    try {
      await crashAndRestart(redis);
      expect(await redis.admin.exists(`troupe:${name}:run`)).toBe(0);
    } finally {
      hold.release();
    }
    const what = 'is gone, its keys lost';
    await expectEveryProcessLost(coordinator, workers, redis.url, name, what);
    for (const process of all) expect(process.stderr()).not.toMatch(/run \w+ of \S+ ended|failed:/);
    // Nothing went on from the empty state: no process wrote the run's keys again.
    expect(await redis.admin.keys(`troupe:${name}:*`)).toEqual([]);
  }, 30_000);

  it('with snapshots only: Redis comes back as of its last snapshot, two ticks back, and every process stops naming what went back', async () => {
    const redis = rdb!;
    const name = 'restart-rdb';
    // The snapshot while tick 3 is held; the crash once tick 5 has begun, its calls held again so that the run is still going.
    const { coordinator, workers, hold } = await startHeldAtTick3(redis, name, ['r1', 'r2'], 12);
    try {
      expect(await redis.admin.save()).toBe('OK');
      hold.release();
      await eventually(() => ticked(redis, name, 5), 'tick 5', 30_000, 5);
      mkdirSync(dirname(hold.path), { recursive: true });
      writeFileSync(hold.path, '');
      await crashAndRestart(redis);
      expect(await redis.admin.exists(`troupe:${name}:run`)).toBe(1);
    } finally {
      hold.release();
    }
    // The tick a process had seen and the one Redis came back at (and the world's version, its last commit, when those went back too).
    const what = 'went back \\(tick ([4-9]|1[0-2]) → 3(, [^)]*)?\\): writes Redis had acknowledged are lost';
    await expectEveryProcessLost(coordinator, workers, redis.url, name, what);
    // The first to find it marked the run lost, and a process that had seen nothing Redis lost stops on that line.
    expect(await redis.admin.get(`troupe:${name}:lost`)).toMatch(lostLine('', redis.url, name, what));
  }, 30_000);
});
