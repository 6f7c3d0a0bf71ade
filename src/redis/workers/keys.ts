/**
 * The keys of a scene run across workers, all under `troupe:<scene>:` (one Redis, no cluster:
 * the commit scripts touch several of them at once).
 */
export type RunKeys = {
  /** The run's record: recipe, definition hash, run id, partitions (a JSON string). */
  run: string;
  /** Live workers, scored by their last heartbeat (wall ms). */
  workers: string;
  /** The last tick's assignment of partitions to workers (`{ tick, owners }`, JSON). */
  assignment: string;
  /** The turns of partition `p`: one entry per tick, read through the consumer group `workers`. */
  turns(p: number): string;
  /** `<tick>:<p>` → the worker that committed it: a partition's tick commits once. */
  committed: string;
  /** One entry per committed partition tick: what the coordinator's barrier waits on. */
  done: string;
  /** The scene's events (the stream `troupe inspect --redis` follows). */
  events: string;
  /** The world's version counter, its log of changes, and the leases of updates in flight. */
  worldVersion: string;
  worldLog: string;
  worldLocks: string;
  /** Partition `p`'s members as of its last commit (agent → snapshot JSON). */
  members(p: number): string;
  /** Partition `p`'s journal for the tick in flight: model replies and calls, for a takeover. */
  journal(p: number): string;
  /** The scene budget's counters (`openRedisBudget`'s hash), shared by every process of the run. */
  budget: string;
  /** Set once a process finds that Redis came back without part of the run: why, for every process to stop on. */
  lost: string;
};

/** The set of runs in progress (run name → start time), for workers started without a scene name. */
export const RUNS_KEY = 'troupe:runs';

/** What a worker reports when it commits a partition's tick: the coordinator's barrier counts these. */
export type PartReport = {
  tick: number;
  p: number;
  worker: string;
  /** Turns its agents took this tick, and how many ended in error. */
  turns: number;
  failures: number;
  /** Nothing more can happen in the partition without outside help (no agent due, busy or on a timer). */
  quiet: boolean;
};

/** Which worker runs each partition in a tick: decided by the coordinator from the live workers, at the tick's start. */
export type Assignment = { tick: number; owners: string[] };

/** The consumer group every turn stream has. */
export const TURN_GROUP = 'workers';

/** Every run key of scene `scene`, given its events stream key. */
export function runKeys(scene: string, events: string): RunKeys {
  const base = `troupe:${scene}`;
  return {
    run: `${base}:run`,
    workers: `${base}:workers`,
    assignment: `${base}:assignment`,
    turns: (p) => `${base}:turns:${p}`,
    committed: `${base}:committed`,
    done: `${base}:done`,
    events,
    worldVersion: `${base}:world:version`,
    worldLog: `${base}:world:log`,
    worldLocks: `${base}:world:locks`,
    members: (p) => `${base}:members:${p}`,
    journal: (p) => `${base}:journal:${p}`,
    budget: `${base}:budget`,
    lost: `${base}:lost`,
  };
}

/** The keys a new run starts without (the events stream is kept: a run appends after the last). */
export function freshRunKeys(keys: RunKeys, partitions: number): string[] {
  const perPartition = Array.from({ length: partitions }, (_, p) => [keys.turns(p), keys.members(p), keys.journal(p)]).flat();
  return [keys.committed, keys.done, keys.assignment, keys.worldVersion, keys.worldLog, keys.worldLocks, keys.budget, keys.lost, ...perPartition];
}
