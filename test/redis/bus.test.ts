import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCrowd } from '../../scenes/crowd/index.js';
import { createBus, subscribeBuffered, type Envelope } from '../../src/bus/index.js';
import { sequentialIds } from '../../src/testing/index.js';
import { bridgeToRedis, subscribeRedis, streamKeyOf, type RedisSubscription } from '../../src/redis/index.js';
import { failWithoutRedisUnderCi, findRedis, killOwnConnections, waitFor } from './redis-server.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

/** Runs a crowd scene of `npcs` for `ticks` on `bus`. */
async function runCrowd(bus: ReturnType<typeof createBus>, npcs: number, ticks: number): Promise<void> {
  const scene = buildCrowd({ npcs, seed: 1, bus });
  await scene.start();
  for (let tick = 0; tick < ticks; tick++) await scene.step();
  await scene.stop();
}

const summary = (event: Envelope): string => `${event.id} ${event.type} ${event.agent ?? ''} ${event.cause ?? ''}`;

describe.runIf(redis !== undefined)('the bus across processes on a Redis stream', () => {
  const url = redis?.url ?? '';

  it('hands a subscriber every event of a scene, in order, as published', async () => {
    const scene = redis!.scene('order');
    const bus = createBus({ ids: sequentialIds('o') });
    const local: Envelope[] = [];
    bus.on('*', (event) => void local.push(event));
    const bridge = await bridgeToRedis(bus, { url, scene });
    const events = await subscribeRedis({ url, scene });
    const remote: Envelope[] = [];
    events.on('*', (event) => void remote.push(event));
    await runCrowd(bus, 3, 4);
    await bridge.flush();
    await waitFor(() => remote.length === local.length, `${local.length} events`);
    expect(remote.map(summary)).toEqual(local.map(summary));
    // Data and times too, as JSON sees them.
    expect(JSON.parse(JSON.stringify(remote))).toEqual(JSON.parse(JSON.stringify(local)));
    expect(bridge.stream).toBe(streamKeyOf(scene));
    expect(await redis!.admin.xlen(bridge.stream)).toBe(local.length);
    // A tick's events go out together: far fewer round trips than events.
    expect(bridge.batches).toBeLessThan(local.length / 5);
    await events.close();
    expect(await bridge.close()).toBe(0);
  });

  it('reaches a subscriber in another process, every event in order', async () => {
    const scene = redis!.scene('child');
    const stream = streamKeyOf(scene);
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('fixtures/subscriber.ts', import.meta.url)), url, scene, stream], { stdio: ['ignore', 'pipe', 'pipe'] });
    // 'close': the child has exited and its output has all been read. Listened to at once: it may
    // exit before the bridge has closed.
    const closed = once(child, 'close') as Promise<[number]>;
    let stderr = '';
    child.stderr.on('data', (chunk) => void (stderr += String(chunk)));
    const lines: string[] = [];
    const ready = new Promise<void>((resolve) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line === 'ready') resolve();
        else lines.push(line);
      });
    });
    await ready;
    const bus = createBus({ ids: sequentialIds('c') });
    const local: string[] = [];
    bus.on('*', (event) => void local.push(JSON.stringify({ id: event.id, type: event.type, agent: event.agent })));
    const bridge = await bridgeToRedis(bus, { url, scene });
    await runCrowd(bus, 4, 5);
    await bridge.close();
    const [code] = await closed;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(lines).toEqual(local);
    expect(lines.length).toBeGreaterThan(50);
  }, 30_000);

  it('matches patterns and filters as the in-process bus does', async () => {
    const scene = redis!.scene('patterns');
    const bus = createBus({ ids: sequentialIds('p') });
    const bridge = await bridgeToRedis(bus, { url, scene });
    const events = await subscribeRedis({ url, scene });
    const seen = { tools: [] as string[], said: 0, npc: [] as string[], first: [] as string[], all: 0, localTools: [] as string[], localNpc: [] as string[] };
    bus.on('tool.*', (event) => void seen.localTools.push(event.id));
    bus.on('*', (event) => void seen.localNpc.push(event.id), { agent: 'npc-1' });
    events.on('tool.*', (event) => void seen.tools.push(event.id));
    events.on('agent.said', () => void seen.said++);
    events.on('*', (event) => void seen.npc.push(event.id), { agent: 'npc-1' });
    events.once('tool.completed', (event) => void seen.first.push(event.data.name));
    events.on('*', () => void seen.all++, { scene: 'not-this-one' });
    await runCrowd(bus, 3, 3);
    await bridge.close();
    await waitFor(() => events.received === bridge.sent, 'every entry');
    expect(seen.tools.length).toBeGreaterThan(0);
    expect(seen.tools).toEqual(seen.localTools);
    expect(seen.npc.length).toBeGreaterThan(0);
    expect(seen.npc).toEqual(seen.localNpc);
    expect(seen.first).toHaveLength(1);
    expect(seen.all).toBe(0);
    await events.close();
  });

  it('applies the backpressure policies through subscribeBuffered on its bus', async () => {
    const scene = redis!.scene('buffered');
    const bus = createBus();
    const bridge = await bridgeToRedis(bus, { url, scene });
    for (let tick = 1; tick <= 200; tick++) bus.publish('scene.tick', { tick }, { scene });
    await bridge.close();
    const events = await subscribeRedis({ url, scene });
    const ticks: number[] = [];
    let dropped = 0;
    const slow = subscribeBuffered(events.bus, 'scene.tick', async (event, delivery) => {
      dropped += delivery.dropped;
      ticks.push(event.data.tick);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }, { policy: 'sample' });
    await waitFor(() => events.received === 200, '200 entries');
    await slow.idle();
    expect(ticks.at(-1)).toBe(200);
    expect(ticks.length + dropped).toBe(200);
    expect(dropped).toBeGreaterThan(0);
    slow.stop();
    await events.close();
  });

  it('resumes from the last id it saw, missing nothing and repeating nothing', async () => {
    const scene = redis!.scene('resume');
    const bus = createBus({ ids: sequentialIds('r') });
    const bridge = await bridgeToRedis(bus, { url, scene });
    const first = await subscribeRedis({ url, scene });
    const got: string[] = [];
    first.on('*', (event) => void got.push(event.id));
    for (let tick = 1; tick <= 10; tick++) bus.publish('scene.tick', { tick });
    await bridge.flush();
    await waitFor(() => got.length === 10, '10 events');
    await first.close();
    for (let tick = 11; tick <= 25; tick++) bus.publish('scene.tick', { tick });
    await bridge.flush();
    const again: RedisSubscription = await subscribeRedis({ url, scene, from: first.lastId });
    again.on('*', (event) => void got.push(event.id));
    for (let tick = 26; tick <= 30; tick++) bus.publish('scene.tick', { tick });
    await bridge.close();
    await waitFor(() => got.length === 30, '30 events');
    expect(got).toEqual(Array.from({ length: 30 }, (_, index) => `r-${index + 1}`));
    // `end`: only what comes from now on.
    const late = await subscribeRedis({ url, scene, from: 'end' });
    expect(late.lastId).toBe(again.lastId);
    await again.close();
    await late.close();
  });

  it('keeps what the retention says: the last maxLen entries, or those of the last maxAgeMs', async () => {
    const byLength = redis!.scene('maxlen');
    const bus = createBus();
    const bridge = await bridgeToRedis(bus, { url, scene: byLength, retention: { maxLen: 10, exact: true } });
    for (let tick = 1; tick <= 100; tick++) bus.publish('scene.tick', { tick });
    await bridge.close();
    expect(await redis!.admin.xlen(streamKeyOf(byLength))).toBe(10);
    const events = await subscribeRedis({ url, scene: byLength });
    const ticks: number[] = [];
    events.on('scene.tick', (event) => void ticks.push(event.data.tick));
    await waitFor(() => ticks.length === 10, 'the 10 kept');
    expect(ticks).toEqual([91, 92, 93, 94, 95, 96, 97, 98, 99, 100]);
    await events.close();
    // A subscriber that resumes from an entry retention has trimmed is told it missed some.
    const notices: string[] = [];
    const behind = await subscribeRedis({ url, scene: byLength, from: '1-0', onNotice: (line) => void notices.push(line) });
    expect(behind.gaps).toBe(1);
    expect(notices).toEqual([expect.stringMatching(/^Redis stream \S+ now starts at \d+-\d+, after 1-0, the last entry this subscriber read: entries may have gone unread/)]);
    await behind.close();
    const current = await subscribeRedis({ url, scene: byLength, from: events.lastId });
    expect(current.gaps).toBe(0);
    await current.close();

    const byAge = redis!.scene('maxage');
    const aged = createBus();
    const ageBridge = await bridgeToRedis(aged, { url, scene: byAge, retention: { maxAgeMs: 150, exact: true } });
    for (let tick = 1; tick <= 5; tick++) aged.publish('scene.tick', { tick });
    await ageBridge.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    aged.publish('scene.tick', { tick: 6 });
    await ageBridge.close();
    expect(await redis!.admin.xlen(streamKeyOf(byAge))).toBe(1);
  });

  it('reconnects after CLIENT KILL: events published meanwhile arrive, once each, in order', async () => {
    const scene = redis!.scene('kill');
    const bus = createBus({ ids: sequentialIds('k') });
    const notices: string[] = [];
    const bridge = await bridgeToRedis(bus, { url, scene, onNotice: (line) => void notices.push(line) });
    const events = await subscribeRedis({ url, scene, blockMs: 200 });
    const got: string[] = [];
    events.on('*', (event) => void got.push(event.id));
    for (let tick = 1; tick <= 20; tick++) bus.publish('scene.tick', { tick });
    await bridge.flush();
    await waitFor(() => got.length === 20, 'the first 20');
    const killed = await killOwnConnections(redis!.admin);
    expect(killed).toBe(2);
    // Published while the connections are down: buffered by the bridge.
    for (let tick = 21; tick <= 60; tick++) {
      bus.publish('scene.tick', { tick });
      if (tick % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await bridge.flush();
    await waitFor(() => got.length === 60, 'all 60 after the reconnect');
    expect(got).toEqual(Array.from({ length: 60 }, (_, index) => `k-${index + 1}`));
    expect(await redis!.admin.xlen(bridge.stream)).toBe(60);
    expect(bridge.failure).toBeUndefined();
    expect(notices.some((line) => /lost the connection to Redis/.test(line))).toBe(true);
    await events.close();
    await bridge.close();
  }, 20_000);
});

