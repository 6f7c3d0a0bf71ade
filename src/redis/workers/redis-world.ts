import { AsyncLocalStorage } from 'node:async_hooks';
import { WorldError, errorMessage } from '../../errors.js';
import { frozenJson } from '../../scene/json-value.js';
import { PathLocks } from '../../scene/path-lock.js';
import { assertNotNested, pathKeys, pathText, type PathKeys } from '../../scene/world-path.js';
import { createWorld, type WorldChanged } from '../../scene/world-state.js';
import type { JsonValue, WorldState, WorldWriter } from '../../scene/world-types.js';
import type { OpenedRedis } from '../connect.js';
import { untilAnswered } from './retry.js';
import type { RunKeys } from './keys.js';
import { ACQUIRE_LEASE, COMMIT_WORLD, RELEASE_LEASE, RENEW_LEASE, runScript } from './scripts.js';

/** How a replicated world behaves: how long an update's lease lasts, how often a taken path is retried. */
export type WorldReplicaOptions = { leaseMs?: number; retryMs?: number };

/**
 * A scene's world kept in Redis, with a replica in every process. Reads are local and
 * synchronous, as brains and perception need them. Every write is committed by a script that
 * takes the next version and appends the change to the world log under that version, so the
 * log's order is the commit order everywhere; a replica applies the log in that order
 * (`catchUp`), its own writes included, and so ends where every other replica ends.
 *
 * `update` holds its path across processes with a lease in Redis (overlapping paths exclude each
 * other, as in one process), catches up to the version the lease was granted at, runs its
 * function on that value, and commits fenced by the lease: an update that outlived its lease is
 * refused rather than written over a later one.
 */
export type WorldReplica = {
  /** What `SceneHooks.world` takes: builds the replica around the scene's initial world. */
  make(initial: Record<string, JsonValue>, onChange: WorldChanged): WorldState;
  /** Writes what waits, then applies the log up to its end. */
  catchUp(): Promise<void>;
  /** Resolves once every write made so far is committed. */
  flush(): Promise<void>;
  /** The last version applied here. */
  readonly version: number;
  /** The first commit Redis refused (the world is then no longer shared), if any. */
  readonly failure: Error | undefined;
  /** Stops renewing leases. */
  close(): void;
};

const DEFAULT_LEASE_MS = 10_000;

/** A replica of the world of the run `keys` names, writing as `writer` (this process). */
export function replicateWorld(opened: OpenedRedis, keys: RunKeys, writer: string, options: WorldReplicaOptions = {}): WorldReplica {
  const { client } = opened;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const retryMs = options.retryMs ?? 5;
  let inner: WorldState | undefined;
  let publish: WorldChanged = () => undefined;
  // Applying the log: the change is someone's commit already, and its `world.changed` travels in the events stream.
  let applying = false;
  let version = 0;
  let failure: Error | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  const locks = new PathLocks();
  const holding = new AsyncLocalStorage<readonly PathKeys[]>();
  const renewals = new Set<ReturnType<typeof setInterval>>();

  // A world write is an absolute value, and a lease is granted again to the token that holds it: both safe to send again.
  const persist = <T>(command: () => Promise<T>): Promise<T> => untilAnswered(opened, command);
  const commitArgs = (at: PathKeys, value: JsonValue | undefined, who: WorldWriter | undefined, lock?: Lease) => [
    JSON.stringify(at),
    value === undefined ? 'delete' : 'set',
    value === undefined ? '' : JSON.stringify(value),
    who?.agent ?? '',
    who?.cause ?? '',
    writer,
    lock?.field ?? '',
    lock?.token ?? '',
  ];
  const enqueue = (at: PathKeys, value: JsonValue | undefined, who: WorldWriter | undefined): void => {
    tail = tail.then(async () => {
      if (failure !== undefined) return;
      try {
        await persist(() => runScript(client, COMMIT_WORLD, [keys.worldVersion, keys.worldLog, keys.worldLocks], commitArgs(at, value, who)));
      } catch (error) {
        failure = new WorldError('world_value', `the world write of "${pathText(at)}" was refused by Redis: ${errorMessage(error)}`);
      }
    });
  };
  const local = (): WorldState => {
    if (inner === undefined) throw new WorldError('world_value', 'the replicated world is used before its scene built it');
    return inner;
  };
  const assertFree = (path: PathKeys, verb: string): void => {
    if (locks.isLocked(path)) throw new WorldError('world_locked', `cannot ${verb} "${pathText(path)}" while an update holds it; use world.update for read-modify-write`);
  };
  const flush = async (): Promise<void> => {
    await tail;
    if (failure !== undefined) throw failure;
  };
  const catchUp = async (): Promise<void> => {
    await flush();
    for (;;) {
      const entries = await persist(() => client.xrange(keys.worldLog, `(${version}-0`, '+', 'COUNT', 1000));
      for (const [id, fields] of entries) {
        const field = (name: string): string => fields[fields.indexOf(name) + 1] ?? '';
        const path = JSON.parse(field('keys')) as string[];
        applying = true;
        try {
          if (field('op') === 'delete') local().delete(path);
          else local().set(path, JSON.parse(field('value')) as JsonValue);
        } finally {
          applying = false;
        }
        version = Number(id.split('-')[0]);
      }
      if (entries.length < 1000) return;
    }
  };
  const lease = async (path: PathKeys, signal: AbortSignal | undefined): Promise<Lease> => {
    const field = path.map((key) => `${key}\u001f`).join('');
    const token = `${writer}:${Math.random().toString(36).slice(2, 10)}`;
    for (let wait = retryMs; ; wait = Math.min(wait * 2, 100)) {
      signal?.throwIfAborted();
      const granted = Number(await persist(() => runScript(client, ACQUIRE_LEASE, [keys.worldLocks, keys.worldVersion], [field, token, leaseMs])));
      if (granted >= 0) {
        const renew = setInterval(() => void runScript(client, RENEW_LEASE, [keys.worldLocks], [field, token, leaseMs]).catch(() => undefined), leaseMs / 3);
        renew.unref();
        renewals.add(renew);
        return { field, token, version: granted, renew };
      }
      // Taken by another process: polled, with a backoff to 100 ms (no queue across processes).
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
  const release = async (held: Lease): Promise<void> => {
    clearInterval(held.renew);
    renewals.delete(held.renew);
    await persist(() => runScript(client, RELEASE_LEASE, [keys.worldLocks], [held.field, held.token])).catch(() => undefined);
  };

  const world: WorldState = {
    get: (path) => local().get(path),
    has: (path) => local().has(path),
    snapshot: () => local().snapshot(),
    set(path, value, who) {
      const keysOf = pathKeys(path);
      assertFree(keysOf, 'set');
      const frozen = frozenJson(value, `the value for "${pathText(keysOf)}"`);
      local().set(keysOf, frozen, who);
      enqueue(keysOf, frozen, who);
    },
    delete(path, who) {
      const keysOf = pathKeys(path);
      assertFree(keysOf, 'delete');
      if (!local().delete(keysOf, who)) return false;
      enqueue(keysOf, undefined, who);
      return true;
    },
    async update(path, fn, updateOptions = {}) {
      const keysOf = pathKeys(path);
      const held = holding.getStore();
      assertNotNested(held, keysOf);
      // In-process first (first come, first served), then across processes.
      const releaseLocal = await locks.acquire(keysOf, updateOptions.signal);
      try {
        await flush();
        const granted = await lease(keysOf, updateOptions.signal);
        try {
          if (granted.version > version) await catchUp();
          const next = await holding.run(held === undefined ? [keysOf] : [...held, keysOf], () => fn(local().get(keysOf)));
          if (next === undefined) return next;
          const frozen = frozenJson(next, `the value for "${pathText(keysOf)}"`);
          const committed = Number(await persist(() => runScript(client, COMMIT_WORLD, [keys.worldVersion, keys.worldLog, keys.worldLocks], commitArgs(keysOf, frozen, updateOptions, granted))));
          local().set(keysOf, frozen, { agent: updateOptions.agent, cause: updateOptions.cause });
          // Nobody else wrote this path since the lease's version: the log up to ours changes nothing here.
          if (committed === version + 1) version = committed;
          return next;
        } finally {
          await release(granted);
        }
      } catch (error) {
        if (/LEASE_LOST/.test(errorMessage(error))) throw new WorldError('world_locked', `update of "${pathText(keysOf)}" lost its lease (held longer than ${leaseMs} ms): not written`);
        throw error;
      } finally {
        releaseLocal();
      }
    },
  };

  return {
    make(initial, onChange) {
      publish = onChange;
      inner = createWorld(initial, (path, value, who) => {
        if (!applying) publish(path, value, who);
      });
      return world;
    },
    catchUp,
    flush,
    get version() {
      return version;
    },
    get failure() {
      return failure;
    },
    close() {
      for (const renew of renewals) clearInterval(renew);
      renewals.clear();
    },
  };
}

type Lease = { field: string; token: string; version: number; renew: ReturnType<typeof setInterval> };
