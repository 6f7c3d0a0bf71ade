import { afterAll, describe, expect, it } from 'vitest';
import { openRedis, type OpenedRedis } from '../../src/redis/connect.js';
import { runKeys } from '../../src/redis/workers/keys.js';
import { replicateWorld, type WorldReplica } from '../../src/redis/workers/redis-world.js';
import { openCoordinator } from '../../src/redis/workers/coordinator.js';
import { runWorker } from '../../src/redis/workers/worker.js';
import { bridgeToRedis, streamKeyOf } from '../../src/redis/index.js';
import { createBus } from '../../src/bus/index.js';
import type { SceneRecipe } from '../../src/bus/event-data.js';
import type { JsonValue, WorldState } from '../../src/index.js';
import { scene as counters } from './fixtures/counters-scene.js';
import { failWithoutRedisUnderCi, findRedis } from './redis-server.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(redis !== undefined)('the world shared through Redis', () => {
  const url = redis?.url ?? '';
  const opened: OpenedRedis[] = [];
  afterAll(() => opened.forEach((connection) => connection.client.disconnect()));

  /** Two processes' replicas of one world, each on its own connection; their `world.changed` in order. */
  async function replicas(scene: string, initial: Record<string, JsonValue>, leaseMs?: number) {
    const keys = runKeys(scene, streamKeyOf(scene));
    const made: { replica: WorldReplica; world: WorldState; changed: string[] }[] = [];
    for (const writer of ['one', 'two']) {
      const connection = await openRedis({ url }, 'test');
      opened.push(connection);
      const replica = replicateWorld(connection, keys, writer, leaseMs === undefined ? {} : { leaseMs });
      const changed: string[] = [];
      made.push({ replica, world: replica.make(initial, (path, value) => void changed.push(`${path}=${JSON.stringify(value)}`)), changed });
    }
    return { keys, made };
  }

  it('lets overlapping updates of two processes run one at a time, even across awaits, and commits them in the log in order', async () => {
    const { keys, made } = await replicas(redis!.scene('exclusive'), { n: 0, bag: { x: 0 } });
    let inside = 0;
    let most = 0;
    const bump = (world: WorldState, path: string) =>
      world.update(path, async (value) => {
        most = Math.max(most, ++inside);
        await pause(3);
        inside--;
        return path === 'bag' ? { x: ((value as { x: number }).x) + 1 } : (value as number) + 1;
      });
    // `bag` and `bag.x` overlap: one at a time across both processes, and no addition lost.
    await Promise.all(made.flatMap(({ world }, index) => Array.from({ length: 8 }, () => bump(world, index === 0 ? 'bag' : 'bag.x'))));
    expect(most).toBe(1);
    for (const { replica } of made) await replica.catchUp();
    for (const { world } of made) expect(world.get('bag')).toEqual({ x: 16 });
    // The log holds the commits in version order, each one seeing the one before.
    const log = await redis!.admin.xrange(keys.worldLog, '-', '+');
    expect(log.map(([id]) => id)).toEqual(Array.from({ length: 16 }, (_, index) => `${index + 1}-0`));
    const values = log.map(([, fields]) => JSON.parse(fields[fields.indexOf('value') + 1]!) as number | { x: number });
    expect(values.map((value) => (typeof value === 'number' ? value : value.x))).toEqual(Array.from({ length: 16 }, (_, index) => index + 1));
    // Each process published `world.changed` for its own writes, in its commit order.
    for (const { changed } of made) expect(changed).toHaveLength(8);
  });

  it('does not hold disjoint paths against each other, and applies plain writes of another process in commit order', async () => {
    const { made } = await replicas(redis!.scene('disjoint'), { p: 0, q: 0, r: 'start' });
    const [one, two] = made as [(typeof made)[0], (typeof made)[0]];
    let release!: () => void;
    const held = one.world.update('p', async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return 1;
    });
    await pause(20);
    expect(await two.world.update('q', () => 2)).toBe(2);
    release();
    await held;
    one.world.set('r', 'first');
    two.world.set('r', 'second');
    await one.replica.flush();
    await two.replica.flush();
    await one.replica.catchUp();
    await two.replica.catchUp();
    // Both replicas end where the log's order puts them, whatever they saw in between.
    expect(one.world.snapshot()).toEqual(two.world.snapshot());
    expect(one.world.get('p')).toBe(1);
    expect(one.world.get('q')).toBe(2);
  });

  it('refuses to write an update whose lease was lost, and keeps one it renews', async () => {
    const { keys, made } = await replicas(redis!.scene('lease'), { n: 0 }, 300);
    const [one] = made as [(typeof made)[0]];
    // Held three times its lease: renewed meanwhile, so it is written.
    expect(await one.world.update('n', async (value) => (await pause(900), (value as number) + 1))).toBe(1);
    const lost = one.world.update('n', async (value) => {
      await redis!.admin.del(keys.worldLocks);
      return (value as number) + 1;
    });
    await expect(lost).rejects.toThrow(/update of "n" lost its lease \(held longer than 300 ms\): not written/);
    await one.replica.catchUp();
    expect(one.world.get('n')).toBe(1);
  });
});

describe.runIf(redis !== undefined)('joining a run across workers', () => {
  const url = redis?.url ?? '';
  const recipe = (scene: string): SceneRecipe => ({ scene, source: { kind: 'file', path: '/nowhere.ts' }, options: { npcs: 2, 'delay-ms': 0 }, seed: 1, ticks: 1, definitionHash: 'a'.repeat(64) });

  it('refuses a worker whose scene code is not the run\'s, and a run whose events stream is another scene\'s', async () => {
    const name = redis!.scene('join');
    const coordinator = await openCoordinator({ url, recipe: recipe(name), name });
    try {
      const refused = runWorker({ url, name, load: async () => ({ definition: counters, hash: 'b'.repeat(64) }) });
      await expect(refused).rejects.toMatchObject({
        code: 'redis_run_mismatch',
        message: `cannot join run ${coordinator.run} of scene "${name}" at ${url}: this worker's scene code differs from the coordinator's (definition hash aaaaaaaaaaaa…, here bbbbbbbbbbbb…): run the same code everywhere`,
      });
    } finally {
      await coordinator.close();
    }
    const other = redis!.scene('other');
    const bridge = await bridgeToRedis(createBus(), { url, scene: other });
    await bridge.close();
    await expect(openCoordinator({ url, recipe: recipe(name), name, stream: streamKeyOf(other) })).rejects.toMatchObject({
      code: 'redis_stream_mismatch',
      message: `Redis stream ${streamKeyOf(other)} cannot be used: it belongs to scene "${other}", not "${name}": give each scene its own stream`,
    });
  });
});
