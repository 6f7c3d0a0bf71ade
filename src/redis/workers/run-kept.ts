import type { OpenedRedis } from '../connect.js';
import { RedisError } from '../redis-error.js';
import type { Assignment, RunKeys } from './keys.js';
import type { RunRecord } from './run-record.js';
import { COMMITS_KEPT } from './scripts.js';

/** What a process has seen of its run: Redis must still hold all of it for the process to go on. */
export type RunSeen = {
  /** The last tick whose assignment it saw or made (0: none yet). */
  tick: number;
  /** The world version its replica has applied. */
  worldVersion: number;
  /** Its last partition commit, if any. */
  commit?: { tick: number; p: number } | undefined;
};

/**
 * After a reconnection, checks that Redis still holds what this process has seen of the run: the
 * run record with this run's id, the tick, the world's version, and this process's last partition
 * commit. A Redis that restarted without persistence holds none of it; one that restarted from
 * an RDB snapshot, or from an append-only file fsynced once a second, may be back at an earlier
 * point. Either way the replicas are ahead of Redis and the run cannot go on: rejects with a
 * one-line `RedisError` (`redis_run_lost`) that says what is missing. A run that is still there,
 * gone back, is marked lost (`keys.lost`, with that line), so that every process stops on it, also
 * those that had seen nothing Redis lost; a run marked lost already rejects with its line.
 */
export async function checkRunKept(opened: OpenedRedis, keys: RunKeys, record: RunRecord, seen: RunSeen): Promise<void> {
  const { client } = opened;
  const field = seen.commit === undefined ? '' : `${seen.commit.tick}:${seen.commit.p}`;
  // The commit before the assignment: the assignment only grows, so a commit trimmed meanwhile (a hundred ticks back) reads as trimmed, not lost.
  const replies = await opened.whileConnected(client.pipeline().get(keys.lost).get(keys.run).hexists(keys.committed, field).get(keys.assignment).get(keys.worldVersion).exec());
  const [marked, run, committed, assignment, version] = (replies ?? []).map(([error, value]) => {
    if (error) throw error;
    return value;
  }) as [string | null, string | null, number, string | null, string | null];
  const already = runLost(marked);
  if (already !== undefined) throw already;
  const tick = assignment === null ? 0 : (JSON.parse(assignment) as Assignment).tick;
  const worldVersion = Number(version ?? 0);
  const missing: string[] = [];
  if (tick < seen.tick) missing.push(`tick ${seen.tick} → ${tick}`);
  if (worldVersion < seen.worldVersion) missing.push(`world version ${seen.worldVersion} → ${worldVersion}`);
  if (seen.commit !== undefined && committed === 0 && seen.commit.tick > tick - COMMITS_KEPT) missing.push(`partition ${seen.commit.p}'s commit of tick ${seen.commit.tick} missing`);
  const theirs = runIdOf(run);
  if (theirs === record.run && missing.length === 0) return;

  const [server, persistence] = await opened.whileConnected(Promise.all([client.info('server'), client.info('persistence')]));
  const restarted = /^run_id:(\S+)/m.exec(server)?.[1] !== opened.serverId;
  const uptime = /^uptime_in_seconds:(\d+)/m.exec(server)?.[1] ?? '?';
  const aof = /^aof_enabled:1/m.test(persistence) ? 'on' : 'off';
  const head = restarted ? `Redis at ${opened.where} restarted (up ${uptime} s, AOF ${aof})` : `Redis at ${opened.where} (not restarted)`;
  const what =
    theirs === undefined
      ? 'is gone, its keys lost'
      : theirs !== record.run
        ? `is gone, run ${theirs} in its place`
        : `went back (${missing.join(', ')}): writes Redis had acknowledged are lost`;
  const next = restarted ? 'start a new one; appendfsync always keeps a run across a restart' : 'start a new one';
  const error = new RedisError('redis_run_lost', `${head}: run ${record.run} of scene "${record.scene}" ${what}; the run cannot go on (${next})`);
  if (theirs === record.run) await opened.whileConnected(client.set(keys.lost, error.message, 'NX')).catch(() => undefined);
  throw error;
}

/** What a process stops with once the run is marked lost (`marked`: the `lost` key's value), or undefined when it is not. */
export function runLost(marked: string | null): RedisError | undefined {
  return marked === null ? undefined : new RedisError('redis_run_lost', marked);
}

/** The run id of a run record's JSON, or undefined when there is none. */
function runIdOf(text: string | null): string | undefined {
  if (text === null) return undefined;
  try {
    return (JSON.parse(text) as Partial<RunRecord>).run;
  } catch {
    return undefined;
  }
}
