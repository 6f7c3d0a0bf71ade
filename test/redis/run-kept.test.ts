import { afterAll, describe, expect, it } from 'vitest';
import { openRedis, type OpenedRedis } from '../../src/redis/connect.js';
import { RedisError, streamKeyOf } from '../../src/redis/index.js';
import { runKeys, type RunKeys } from '../../src/redis/workers/keys.js';
import { checkRunKept, type RunSeen } from '../../src/redis/workers/run-kept.js';
import type { RunRecord } from '../../src/redis/workers/run-record.js';
import { failWithoutRedisUnderCi, findRedis } from './redis-server.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

/**
 * The check a process makes after each reconnection (`checkRunKept`), on keys set by hand: it
 * passes while Redis holds what the process has seen, and otherwise names what is missing.
 * (test/redis/redis-restart.test.ts crashes a real server under a run.)
 */
describe.runIf(redis !== undefined)('the check after a reconnection', () => {
  let opened: OpenedRedis;
  afterAll(() => opened?.client.disconnect());

  /** A run of 2 partitions at tick 120, world version 40, partition 1 committed at tick 120 and tick 19 trimmed. */
  async function run(name: string): Promise<{ keys: RunKeys; record: RunRecord }> {
    opened ??= await openRedis({ url: redis!.url }, 'test');
    const scene = redis!.scene(name);
    const keys = runKeys(scene, streamKeyOf(scene));
    const record = { run: 'r1', scene, state: 'running' } as RunRecord;
    await redis!.admin.set(keys.run, JSON.stringify(record));
    await redis!.admin.set(keys.assignment, JSON.stringify({ tick: 120, owners: ['w1', 'w2'] }));
    await redis!.admin.set(keys.worldVersion, '40');
    await redis!.admin.hset(keys.committed, 'c:120', 'r1', '120:1', 'w2');
    return { keys, record };
  }

  const refusal = async (promise: Promise<void>): Promise<string> => {
    const error = await promise.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(RedisError);
    expect((error as RedisError).code).toBe('redis_run_lost');
    expect((error as RedisError).message).not.toContain('\n');
    return (error as RedisError).message;
  };

  it('passes while Redis holds the run, its tick, its world version and the last commit; a commit trimmed long ago is not missed', async () => {
    const { keys, record } = await run('kept');
    const seen: RunSeen[] = [
      { tick: 0, worldVersion: 0 },
      { tick: 120, worldVersion: 40, commit: { tick: 120, p: 1 } },
      // Commits are remembered for the last 100 ticks: one of tick 19 is gone by tick 120, not lost.
      { tick: 119, worldVersion: 12, commit: { tick: 19, p: 0 } },
    ];
    for (const one of seen) await checkRunKept(opened, keys, record, one);
    expect(await redis!.admin.exists(keys.lost)).toBe(0);
  });

  it('names what went back, and marks the run lost so that every process stops on the same line', async () => {
    const { keys, record } = await run('back');
    const message = await refusal(checkRunKept(opened, keys, record, { tick: 122, worldVersion: 47, commit: { tick: 121, p: 0 } }));
    expect(message).toBe(
      `Redis at ${redis!.url} (not restarted): run r1 of scene "${record.scene}" went back (tick 122 → 120, world version 47 → 40, partition 0's commit of tick 121 missing): writes Redis had acknowledged are lost; the run cannot go on (start a new one)`,
    );
    expect(await redis!.admin.get(keys.lost)).toBe(message);
    // Another process, which had seen nothing Redis lost, stops on the mark.
    expect(await refusal(checkRunKept(opened, keys, record, { tick: 0, worldVersion: 0 }))).toBe(message);
  });

  it('says when the run is gone, or another run has taken its name, and marks nothing then', async () => {
    const { keys, record } = await run('gone');
    await redis!.admin.del(keys.run);
    expect(await refusal(checkRunKept(opened, keys, record, { tick: 0, worldVersion: 0 }))).toBe(
      `Redis at ${redis!.url} (not restarted): run r1 of scene "${record.scene}" is gone, its keys lost; the run cannot go on (start a new one)`,
    );
    await redis!.admin.set(keys.run, JSON.stringify({ ...record, run: 'r2' }));
    expect(await refusal(checkRunKept(opened, keys, record, { tick: 0, worldVersion: 0 }))).toMatch(/: run r1 of scene "\S+" is gone, run r2 in its place; the run cannot go on \(start a new one\)$/);
    expect(await redis!.admin.exists(keys.lost)).toBe(0);
  });
});
