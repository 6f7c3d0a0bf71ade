import { randomBytes } from 'node:crypto';
import { Redis } from '../../src/redis/load-ioredis.js';
import { buildCrowd } from '../../scenes/crowd/index.js';
import { createBus, type Bus } from '../../src/index.js';
import { bridgeToRedis, subscribeRedis, type RedisBridge } from '../../src/redis/index.js';
import type { Row } from './measure.js';

/**
 * A crowd scene's events through a Redis stream, against the same scene on the in-process bus
 * alone: `npcs` NPCs for `ticks` ticks (after one warm-up tick), three ways —
 *
 * - in-process: every event to one `bus.on('*')` subscriber;
 * - publish: the same, with the bus bridged to a stream; timed until the last entry is written;
 * - end to end: the same, until a subscriber on its own connection has received the last event.
 *
 * Round trips per tick are the bridge's pipelines (one per event-loop turn) over the ticks, checked
 * against the server's own count of XADD calls (`INFO commandstats`; other clients of the same
 * server add to it). Keys are deleted after. Needs a Redis at `url` (6.2+).
 */
export async function benchRedis(url: string, npcs: number, ticks: number): Promise<Row[]> {
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  try {
    const local = await timeCrowd(npcs, ticks, async () => ({ done: async () => undefined }));
    const before = await xaddCalls(admin);
    let batches = 0;
    let written = 0;
    const publish = await timeCrowd(npcs, ticks, async (bus) => {
      const bridge = await bridgeToRedis(bus, { url, scene: `${prefix}-publish`, maxBuffered: WHOLE_RUN });
      return {
        done: async () => {
          await bridge.flush();
          throwIfStopped(bridge);
          batches = bridge.batches;
          written = bridge.sent;
          await bridge.close();
        },
      };
    });
    const xadds = (await xaddCalls(admin)) - before;
    const endToEnd = await timeCrowd(npcs, ticks, async (bus) => {
      const scene = `${prefix}-e2e`;
      const bridge = await bridgeToRedis(bus, { url, scene, maxBuffered: WHOLE_RUN });
      const events = await subscribeRedis({ url, scene });
      let received = 0;
      let published = 0;
      bus.on('*', () => void published++);
      let arrived!: () => void;
      const all = new Promise<void>((resolve) => (arrived = resolve));
      events.on('*', () => {
        if (++received === published && finished) arrived();
      });
      let finished = false;
      return {
        done: async () => {
          finished = true;
          await bridge.flush();
          // A bridge that stopped never writes the rest: waiting for it would never end.
          throwIfStopped(bridge);
          if (received < published) await all;
          await events.close();
          await bridge.close();
        },
      };
    });
    const perTick = batches / (ticks + 1);
    const row = (name: string, result: Timed): Row => ({
      name: `redis: ${npcs.toLocaleString('en-US')} NPCs × ${ticks} ticks, ${name}`,
      iterations: result.events,
      usPerOp: (result.seconds * 1e6) / result.events,
      ratio: result.seconds / local.seconds,
      note: `${Math.round(result.events / result.seconds).toLocaleString('en-US')} events/s`,
    });
    return [
      { ...row('in-process bus', local), ratio: 1 },
      { ...row('published to the stream', publish), note: `${row('', publish).note}; ${perTick.toFixed(2)} round trips/tick (${batches} pipelines for ${written.toLocaleString('en-US')} events; server counted ${xadds.toLocaleString('en-US')} XADD)` },
      row('end to end to a subscriber', endToEnd),
    ];
  } finally {
    const keys = await admin.keys(`troupe:${prefix}-*`);
    if (keys.length > 0) await admin.del(...keys);
    admin.disconnect();
  }
}

type Timed = { seconds: number; events: number };

/** Runs the crowd on a bus with one counting subscriber and what `attach` adds; times ticks 2.. and `done`. */
async function timeCrowd(npcs: number, ticks: number, attach: (bus: Bus) => Promise<{ done: () => Promise<void> }>): Promise<Timed> {
  const bus = createBus();
  let events = 0;
  bus.on('*', () => void events++);
  const extra = await attach(bus);
  const scene = buildCrowd({ npcs, seed: 1, bus });
  await scene.start();
  await scene.step();
  const counted = events;
  const start = process.hrtime.bigint();
  for (let tick = 0; tick < ticks; tick++) await scene.step();
  await extra.done();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await scene.stop();
  return { seconds, events: events - counted };
}

/** XADD calls the server has counted since it started. */
async function xaddCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  return Number(/cmdstat_xadd:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

/**
 * Events a bench run's bridge may hold: all of them. The crowd publishes faster than one connection
 * writes, and the bench times how long the stream takes to catch up, not how the bridge gives up.
 */
const WHOLE_RUN = 50_000_000;

function throwIfStopped(bridge: RedisBridge): void {
  if (bridge.failure !== undefined) throw new Error(`the bench's Redis bridge stopped: ${bridge.failure.message}`);
}
