import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { SceneRecipe } from '../../bus/event-data.js';
import { sequentialIds } from '../../bus/ids.js';
import { ConfigError, errorMessage } from '../../errors.js';
import { partedSceneOf } from '../../scene/create-scene.js';
import type { SceneDefinition } from '../../scene/define-scene.js';
import type { Scene, SceneModel } from '../../scene/types.js';
import { buildWithHooks } from '../../scene/scene-hooks.js';
import { isConnectionError, openRedis, type OpenedRedis, type RedisConnection } from '../connect.js';
import { RedisError } from '../redis-error.js';
import { checkHeader, readHeader, streamKeyOf } from '../stream-header.js';
import { runKeys, RUNS_KEY, type RunKeys } from './keys.js';
import { joinWorkers } from './membership.js';
import { PartRunner } from './part-runner.js';
import { TurnReader } from './turn-reader.js';
import { reconnected, untilAnswered } from './retry.js';
import { replicateWorld } from './redis-world.js';
import { checkRunKept, runLost } from './run-kept.js';
import { checkRunFits, readRunRecord, type RunRecord } from './run-record.js';
import { SharedLimits } from '../run-limits.js';
import { TurnJournal } from './turn-journal.js';

export type WorkerOptions = RedisConnection & {
  /** The run to join (the name its keys go under); absent: the first run in progress, waited for. */
  name?: string;
  /** Builds the scene a run's recipe names, and hashes its code here: refused unless it is the coordinator's. */
  load(recipe: SceneRecipe): Promise<{ definition: SceneDefinition; hash: string; model?: SceneModel }>;
  /** This worker's id (default host:pid:random): how rendezvous hashing places partitions. */
  id?: string;
  heartbeatMs?: number;
  logger?: Logger;
  /** Leaves the run after the tick in progress: its partitions move to the other workers. */
  signal?: AbortSignal;
  onNotice?: (line: string) => void;
  /** Called with the scene once it is built, before it starts (the CLI answers approvals there as the run's `--approve` says). */
  prepare?: (scene: Scene, recipe: SceneRecipe) => void;
};

/**
 * A worker's turn window when the scene sets none. Each turn's calls wait for their starts to
 * reach the journal in Redis, and the starts of the turns in flight share one round trip: with
 * the in-process default of 64, a tick of 50,000 turns would wait on some 800 round trips.
 */
const TURN_WINDOW = 4096;

/** What a worker did in the run it joined. */
export type WorkerResult = {
  run: string;
  name: string;
  /** Partition ticks it committed, the turns its agents took in them, and the partitions' ticks it took over from a worker gone. */
  committed: number;
  turns: number;
  claimed: number;
  /** Round trips to Redis it waited on (a script or a pipeline counts one). */
  roundTrips: number;
};

/**
 * Joins a run of a scene across workers (`troupe worker`): builds the same scene from the run's
 * recipe, refusing other code; then, until the run ends, takes the turns of the partitions
 * rendezvous hashing gives it — new ones from the consumer group, and those a dead worker left
 * pending for longer than the run's claim time (`XAUTOCLAIM`) — and commits each partition's
 * tick. Rejects with a one-line `RedisError` at startup.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerResult> {
  const id = options.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 4)}`;
  const note = options.onNotice ?? (() => undefined);
  const opened = await openRedis(options, 'worker');
  const { client, where } = opened;
  // Every command in flight waits on the connection's close (see whileConnected): a tick has many.
  client.setMaxListeners(0);
  try {
    const name = options.name ?? (await firstRun(opened, options.signal));
    if (name === undefined) return { run: '', name: '', committed: 0, turns: 0, claimed: 0, roundTrips: 0 };
    const record = await waitForRun(opened, runKeys(name, streamKeyOf(name)), options.signal, note);
    if (record === undefined) return { run: '', name, committed: 0, turns: 0, claimed: 0, roundTrips: 0 };
    const keys = runKeys(name, record.stream);
    const loaded = await options.load(record.recipe);
    checkRunFits(record, loaded.hash, where);
    const header = await readHeader(client, keys.events);
    if (header !== undefined) checkHeader(header, keys.events, name);
    const world = replicateWorld(opened, keys, id);
    const journal = new TurnJournal(opened, keys, record.partitions);
    const limits = new SharedLimits(options, name, note);
    const scene = await buildWithHooks(
      { world: (initial, onChange) => world.make(initial, onChange), ids: sequentialIds(`${name}.${id.split(':').pop()}`), ...journal.hooks, ...limits.hooks, turnWindow: TURN_WINDOW },
      () =>
        loaded.definition.create({
          seed: record.recipe.seed,
          options: record.recipe.options as Record<string, string | number | boolean>,
          ...(options.logger !== undefined && { logger: options.logger }),
          ...(loaded.model !== undefined && { model: loaded.model }),
        }),
    );
    const parted = partedSceneOf(scene);
    if (parted.schedule === 'round-robin') throw new ConfigError(`scene "${scene.name}" is round-robin: one turn per tick across the whole cast cannot be split over workers; run it in one process`);
    journal.attach(scene.bus);
    options.prepare?.(scene, record.recipe);
    await scene.start();
    const membership = await joinWorkers(opened, keys, id, options.heartbeatMs);
    note(`worker ${id} joined run ${record.run} of scene "${name}" (${record.partitions} partitions)`);
    const runner = new PartRunner({ opened, keys, record, worker: id, scene: parted, world, journal, eventsFrom: record.eventsFrom });
    const reader = new TurnReader(opened, keys, record, id, membership.live);
    // A Redis that comes back without what this worker has seen (restarted without persistence, or rolled back) ends it.
    opened.checkAfterReconnect(() => checkRunKept(opened, keys, record, { tick: reader.seenTick, worldVersion: world.version, commit: runner.lastCommit }));
    try {
      await loop(opened, keys, record, runner, reader, options.signal);
    } finally {
      await membership.leave();
      world.close();
      await scene.stop('stopped').catch(() => undefined);
      await limits.close();
    }
    return { run: record.run, name, committed: runner.committed, turns: runner.turns, claimed: reader.claimed, roundTrips: opened.roundTrips };
  } catch (error) {
    // What failed once Redis came back without the run (a world write, a commit) failed for that reason.
    if (opened.lost !== undefined) throw opened.lost;
    if (error instanceof RedisError || error instanceof ConfigError) throw error;
    throw new RedisError('redis_failed', `worker ${id} at ${where} stopped: ${errorMessage(error)}`, { cause: error });
  } finally {
    if (client.status === 'ready') await client.quit().catch(() => undefined);
    client.disconnect();
  }
}

/** Runs turns until the run ends (or `signal`); a dropped connection is waited out, and what was read stays pending. */
async function loop(opened: OpenedRedis, keys: RunKeys, record: RunRecord, runner: PartRunner, reader: TurnReader, signal: AbortSignal | undefined): Promise<void> {
  let lastCheck = Date.now();
  while (signal?.aborted !== true) {
    try {
      if (Date.now() - lastCheck > 250) {
        lastCheck = Date.now();
        const [now, marked] = await opened.whileConnected(Promise.all([readRunRecord(opened.client, keys), opened.client.get(keys.lost)]));
        // Another process found Redis without part of the run: this one stops with it.
        const lost = runLost(marked);
        if (lost !== undefined) throw lost;
        if (now === undefined || now.run !== record.run || now.state !== 'running') return;
        // A coordinator that stopped beating has died: its run cannot end any other way.
        if (Date.now() - now.beat > 3 * record.claimIdleMs) return;
      }
      const batch = await reader.next();
      if (batch !== undefined) await runner.runTick(batch.tick, batch.entries);
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      await reconnected(opened, () => signal?.aborted === true);
    }
  }
}

/** The oldest run in progress whose coordinator is alive, waited for (undefined if `signal` aborts first). */
async function firstRun(opened: OpenedRedis, signal: AbortSignal | undefined): Promise<string | undefined> {
  while (signal?.aborted !== true) {
    for (const name of await untilAnswered(opened, () => opened.client.zrange(RUNS_KEY, '0', '-1'))) {
      const record = await untilAnswered(opened, () => readRunRecord(opened.client, runKeys(name, streamKeyOf(name))));
      if (record !== undefined && record.state === 'running' && Date.now() - record.beat < 3 * record.claimIdleMs) return name;
      // A coordinator that died left its run in the set: it is not joined.
      if (record === undefined || record.state === 'ended') await untilAnswered(opened, () => opened.client.zrem(RUNS_KEY, name));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

/** The run record once its coordinator has written it and is alive. */
async function waitForRun(opened: OpenedRedis, keys: RunKeys, signal: AbortSignal | undefined, note: (line: string) => void): Promise<RunRecord | undefined> {
  let said = false;
  while (signal?.aborted !== true) {
    const record = await untilAnswered(opened, () => readRunRecord(opened.client, keys));
    if (record !== undefined && record.state === 'running' && Date.now() - record.beat < 3 * record.claimIdleMs) return record;
    if (!said) note(`waiting for a run at ${keys.run}`);
    said = true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}
