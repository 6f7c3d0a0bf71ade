import { randomUUID } from 'node:crypto';
import type { SceneRecipe } from '../../bus/event-data.js';
import { sequentialIds } from '../../bus/ids.js';
import { CATALOGUE_VERSION } from '../../bus/events.js';
import { ConfigError, errorMessage } from '../../errors.js';
import { partedSceneOf } from '../../scene/create-scene.js';
import type { SceneHooks } from '../../scene/scene-hooks.js';
import type { Scene, SceneResult, SceneStopReason } from '../../scene/types.js';
import { openRedis, type OpenedRedis, type RedisConnection } from '../connect.js';
import { RedisError } from '../redis-error.js';
import { claimHeader, streamKeyOf } from '../stream-header.js';
import { SharedLimits } from '../run-limits.js';
import { EventRelay } from './event-relay.js';
import { freshRunKeys, runKeys, RUNS_KEY, TURN_GROUP, type Assignment, type PartReport, type RunKeys } from './keys.js';
import { ownerOf } from './partition.js';
import { DEFAULT_HEARTBEAT_MS, liveWorkers } from './membership.js';
import { replicateWorld, type WorldReplica } from './redis-world.js';
import { checkRunKept, runLost } from './run-kept.js';
import { readRunRecord, RUN_FORMAT, RUN_VERSION, type RunRecord } from './run-record.js';
import { untilAnswered } from './retry.js';
import { COMMIT_TICK, runScript } from './scripts.js';

const DEFAULT_PARTITIONS = 16;
const DEFAULT_CLAIM_IDLE_MS = 5_000;

export type CoordinatorOptions = RedisConnection & {
  /** The name the run's keys go under (`troupe:<name>:…`); default: the recipe's scene. */
  name?: string;
  /** The events stream (default `troupe:<name>:events`). */
  stream?: string;
  /** How to build the scene, with the hash of its code: what every worker builds and checks. */
  recipe: SceneRecipe;
  /** Partitions the cast is split into (default 16): the most workers that can share the work. */
  partitions?: number;
  /** How long a turn may go unacknowledged before another worker claims it (default 5,000 ms). */
  claimIdleMs?: number;
  /** Workers to wait for before the first tick (default 1). */
  workers?: number;
  onNotice?: (line: string) => void;
};

/** A run across workers, opened: build the scene with `hooks`, then `run` it. */
export type Coordinator = {
  readonly run: string;
  readonly name: string;
  readonly stream: string;
  readonly partitions: number;
  /** Round trips to Redis the coordinator has waited on so far (the world's replica's included). */
  readonly roundTrips: number;
  /** What the scene must be built with (`buildWithHooks`): the world in Redis, ids of this process. */
  readonly hooks: SceneHooks;
  /** Ticks the scene: each tick's turns go to the workers, and the next waits for all of them. */
  drive(scene: Scene, options: { ticks: number; signal?: AbortSignal }): Promise<SceneResult>;
  /** Ends the run (workers leave) and closes the connection. */
  close(): Promise<void>;
};

/**
 * Opens a run of a scene across workers: refuses a run of the same name still in progress,
 * clears what an earlier run left, claims the events stream, and writes the run record workers
 * build the scene from.
 */
export async function openCoordinator(options: CoordinatorOptions): Promise<Coordinator> {
  const name = options.name ?? options.recipe.scene;
  const partitions = options.partitions ?? DEFAULT_PARTITIONS;
  if (!Number.isSafeInteger(partitions) || partitions < 1 || partitions > 1024) throw new ConfigError(`partitions must be an integer from 1 to 1024, got ${String(partitions)}`);
  const claimIdleMs = options.claimIdleMs ?? DEFAULT_CLAIM_IDLE_MS;
  if (!Number.isSafeInteger(claimIdleMs) || claimIdleMs < 100) throw new ConfigError(`claimIdleMs must be an integer ≥ 100, got ${String(claimIdleMs)}`);
  const stream = options.stream ?? streamKeyOf(name);
  const keys = runKeys(name, stream);
  const opened = await openRedis(options, 'coordinator');
  const { client, where } = opened;
  // Every command in flight waits on the connection's close (see whileConnected).
  client.setMaxListeners(0);
  const run = randomUUID().slice(0, 8);
  try {
    const earlier = await readRunRecord(client, keys);
    if (earlier?.state === 'running' && Date.now() - earlier.beat < 3 * claimIdleMs) {
      throw new RedisError('redis_run_mismatch', `run ${earlier.run} of scene "${name}" is still in progress at ${where}: one coordinator per scene (give this run another name)`);
    }
    await claimHeader(client, stream, name);
    const eventsFrom = await topId(opened, stream);
    await client.del(...freshRunKeys(keys, partitions), keys.workers);
    const pipeline = client.pipeline();
    for (let p = 0; p < partitions; p++) pipeline.xgroup('CREATE', keys.turns(p), TURN_GROUP, '0', 'MKSTREAM');
    await pipeline.exec();
    const record: RunRecord = {
      format: RUN_FORMAT,
      version: RUN_VERSION,
      catalogue: CATALOGUE_VERSION,
      run,
      scene: name,
      recipe: options.recipe,
      partitions,
      claimIdleMs,
      state: 'running',
      beat: Date.now(),
      stream,
      eventsFrom,
    };
    await client.set(keys.run, JSON.stringify(record));
    await client.zadd(RUNS_KEY, Date.now(), name);
    const world = replicateWorld(opened, keys, `coordinator:${run}`);
    return coordinator(opened, keys, record, world, options);
  } catch (error) {
    client.disconnect();
    if (error instanceof RedisError || error instanceof ConfigError) throw error;
    throw new RedisError('redis_failed', `cannot open run of scene "${name}" at ${where}: ${errorMessage(error)}`, { cause: error });
  }
}

function coordinator(opened: OpenedRedis, keys: RunKeys, record: RunRecord, world: WorldReplica, options: CoordinatorOptions): Coordinator {
  const { client } = opened;
  const { partitions, scene: name, run } = record;
  const note = options.onNotice ?? (() => undefined);
  const limits = new SharedLimits(options, name, note);
  let relay: EventRelay | undefined;
  let closed = false;
  /** The last tick whose turns were committed. */
  let lastTick = 0;
  // A Redis that comes back without what this run has committed (restarted without persistence, or rolled back) ends it.
  opened.checkAfterReconnect(() => checkRunKept(opened, keys, record, { tick: lastTick, worldVersion: world.version }));
  /** Writes the run record; rejects once a process has found Redis without part of the run (`keys.lost`). */
  const setRecord = async (changes: Partial<RunRecord>): Promise<void> => {
    const [, marked] = await untilAnswered(opened, () => Promise.all([client.set(keys.run, JSON.stringify(Object.assign(record, changes))), client.get(keys.lost)]));
    const lost = runLost(marked);
    if (lost !== undefined) throw lost;
  };
  /** Sends the scene's events so far, and with an assignment its tick's turns, in one script that commits once. */
  const commitTick = async (field: string, assignment: Assignment | undefined): Promise<void> => {
    const events = relay?.take(-1) ?? [];
    const turns = assignment === undefined ? [] : [keys.assignment, ...Array.from({ length: partitions }, (_, p) => keys.turns(p))];
    const args = [field, run, String(assignment?.tick ?? 0), JSON.stringify(assignment ?? null), events.length, ...events];
    await untilAnswered(opened, () => runScript(client, COMMIT_TICK, [keys.committed, keys.events, ...turns], args));
    if (assignment !== undefined) lastTick = assignment.tick;
  };
  /** Who runs each partition this tick: rendezvous hashing over the workers alive now (waited for, if none is). */
  const assign = async (tick: number, signal: AbortSignal | undefined): Promise<Assignment | undefined> => {
    await waitForWorkers(1, signal);
    if (signal?.aborted) return undefined;
    const live = await untilAnswered(opened, () => liveWorkers(opened, keys));
    return { tick, owners: Array.from({ length: partitions }, (_, p) => ownerOf(p, live)!) };
  };
  const waitForWorkers = async (wanted: number, signal: AbortSignal | undefined): Promise<void> => {
    let lastSaid = 0;
    for (;;) {
      const live = await untilAnswered(opened, () => liveWorkers(opened, keys, DEFAULT_HEARTBEAT_MS));
      if (live.length >= wanted || signal?.aborted) return;
      await setRecord({ beat: Date.now() });
      if (Date.now() - lastSaid > 5_000) {
        note(`waiting for ${wanted} worker${wanted === 1 ? '' : 's'} to join run ${run} (${live.length} so far): troupe worker --redis URL --scene ${name}`);
        lastSaid = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** Waits until every partition has committed `tick`; what they reported. */
  const barrier = async (tick: number, from: { id: string }, signal: AbortSignal | undefined): Promise<PartReport[] | undefined> => {
    const reports = new Map<number, PartReport>();
    let waited = 0;
    while (reports.size < partitions) {
      if (signal?.aborted) return undefined;
      const read = await untilAnswered(opened, () => client.xread('COUNT', 1000, 'BLOCK', 1000, 'STREAMS', keys.done, from.id));
      await setRecord({ beat: Date.now() });
      if (read === null) {
        if (++waited % 10 === 0) {
          const missing = Array.from({ length: partitions }, (_, p) => p).filter((p) => !reports.has(p));
          const live = await untilAnswered(opened, () => liveWorkers(opened, keys));
          note(`tick ${tick} still waits for partition${missing.length === 1 ? '' : 's'} ${missing.join(', ')} (live workers: ${live.join(', ') || 'none'})`);
        }
        continue;
      }
      for (const [id, fields] of read[0]![1]) {
        from.id = id;
        const report = JSON.parse(fields[1]!) as PartReport;
        if (report.tick === tick) reports.set(report.p, report);
      }
    }
    return [...reports.values()];
  };

  return {
    run,
    name,
    stream: keys.events,
    partitions,
    get roundTrips() {
      return opened.roundTrips;
    },
    hooks: {
      world: (initial, onChange) => world.make(initial, onChange),
      ids: sequentialIds(`${name}.c${run}`),
      // From the first event on (agents spawning while the scene is built): the coordinator runs no turns, so all of it is the scene's own.
      observe: (bus) => void (relay ??= new EventRelay(bus, true)),
      ...limits.hooks,
    },
    async drive(scene, driveOptions) {
      const parted = partedSceneOf(scene);
      if (parted.schedule === 'round-robin') throw new ConfigError(`scene "${scene.name}" is round-robin: one turn per tick across the whole cast cannot be split over workers; run it in one process`);
      relay ??= new EventRelay(scene.bus, true);
      const { signal } = driveOptions;
      await waitForWorkers(options.workers ?? 1, signal);
      await scene.start();
      let reason: SceneStopReason = 'ticks';
      const done = { id: '0-0' };
      for (let tick = 1; tick <= driveOptions.ticks; tick++) {
        if (signal?.aborted) {
          reason = 'signal';
          break;
        }
        const assignment = await assign(tick, signal);
        if (assignment === undefined) {
          reason = 'signal';
          break;
        }
        parted.tickCount = tick;
        scene.bus.publish('scene.tick', { tick }, { scene: scene.name });
        // The tick's own events first, then its turns: workers read the stream up to the tick's `scene.tick`.
        await commitTick(`c:${tick}`, assignment);
        const reports = await barrier(tick, done, signal);
        if (reports === undefined) {
          reason = 'signal';
          break;
        }
        for (const report of reports) {
          parted.turnCount += report.turns;
          parted.failures += report.failures;
        }
        // The scene budget is spent in the workers: the run ends once any of them found it exhausted, as one process ends.
        const exhausted = await limits.budget?.authority.exhausted();
        if (exhausted !== undefined) {
          limits.budget!.keep(exhausted);
          reason = 'budget';
          break;
        }
        if (reports.every((report) => report.quiet)) {
          reason = 'quiet';
          break;
        }
      }
      await world.catchUp();
      const result = await parted.stop(reason, limits.budget?.exhausted?.message);
      await commitTick('c:end', undefined);
      return result;
    },
    async close() {
      if (closed) return;
      closed = true;
      world.close();
      await limits.close();
      if (client.status === 'ready') {
        await setRecord({ state: 'ended', beat: Date.now() }).catch(() => undefined);
        await opened.whileConnected(client.zrem(RUNS_KEY, name)).catch(() => undefined);
        await client.quit().catch(() => undefined);
      }
      client.disconnect();
    },
  };
}

/** The id of the stream's last entry ('0-0' when empty): workers replay the run's events after it. */
async function topId(opened: OpenedRedis, stream: string): Promise<string> {
  const last = await opened.client.xrevrange(stream, '+', '-', 'COUNT', 1);
  return last[0]?.[0] ?? '0-0';
}
