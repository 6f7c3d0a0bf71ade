import type { OpenedRedis } from '../connect.js';
import type { RunKeys } from './keys.js';

/** How often a worker says it is alive, and how many beats it may miss before it counts as gone. */
export const DEFAULT_HEARTBEAT_MS = 1_000;
const MISSED_BEATS = 3;

/** A worker's membership: its heartbeat in the run's sorted set, and the live workers as it sees them. */
export type Membership = {
  readonly id: string;
  /** The live workers (beat within three heartbeats), sorted. */
  live(): Promise<string[]>;
  /** Leaves the set at once (a clean exit): its partitions move at the next tick. */
  leave(): Promise<void>;
};

/**
 * Joins the run's worker set and keeps beating. Scores are Redis's own clock (`TIME`), so
 * machines with skewed clocks agree on who is alive.
 */
export async function joinWorkers(opened: OpenedRedis, keys: RunKeys, id: string, heartbeatMs = DEFAULT_HEARTBEAT_MS): Promise<Membership> {
  const { client } = opened;
  const now = async (): Promise<number> => {
    const [seconds, micros] = await client.time();
    return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
  };
  const beat = async (): Promise<void> => void (await opened.whileConnected((async () => client.zadd(keys.workers, await now(), id))()));
  await beat();
  let left = false;
  const timer = setInterval(() => {
    if (!left && opened.ready) beat().catch(() => undefined);
  }, heartbeatMs);
  timer.unref();
  return {
    id,
    live: () => liveWorkers(opened, keys, heartbeatMs),
    async leave() {
      left = true;
      clearInterval(timer);
      await opened.whileConnected(client.zrem(keys.workers, id)).catch(() => undefined);
    },
  };
}

/** The workers whose last beat is within three heartbeats, sorted by id. */
export async function liveWorkers(opened: OpenedRedis, keys: RunKeys, heartbeatMs = DEFAULT_HEARTBEAT_MS): Promise<string[]> {
  const [seconds, micros] = await opened.client.time();
  const now = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
  const ids = await opened.client.zrangebyscore(keys.workers, now - MISSED_BEATS * heartbeatMs, '+inf');
  return ids.sort();
}
