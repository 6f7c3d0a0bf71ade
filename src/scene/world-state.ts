import { AsyncLocalStorage } from 'node:async_hooks';
import { WorldError } from '../errors.js';
import { frozenJson } from './json-value.js';
import { PathLocks } from './path-lock.js';
import { assertNotNested, pathKeys, pathText, type PathKeys } from './world-path.js';
import type { JsonValue, WorldState, WorldWriter } from './world-types.js';

type Container = { [key: string]: JsonValue } | JsonValue[];

/** Where the world reports its changes: the scene publishes `world.changed`. */
export type WorldChanged = (path: string, value: JsonValue | undefined, writer: WorldWriter | undefined) => void;

/**
 * Creates a world document. Values are stored as frozen copies, so a reader can never change the
 * world behind its back and a `world.changed` event can share the stored value. Containers along
 * a written path are copied once when they were frozen (copy on write), so a write costs the
 * width of the containers it passes through, not the size of the world.
 *
 * @example
 * const world = createWorld({ tavern: { ale: 10 } }, (path, value) => console.log(path, value));
 * await world.update('tavern.ale', (ale) => (ale as number) - 1);
 */
export function createWorld(initial: Record<string, JsonValue>, onChange: WorldChanged): WorldState {
  let root = thaw(frozenJson(initial ?? {}, 'the initial world') as Container) as { [key: string]: JsonValue };
  const locks = new PathLocks();
  // The paths the running update holds, through its awaits: a nested update can see them.
  const holding = new AsyncLocalStorage<readonly PathKeys[]>();

  const read = (keys: PathKeys): JsonValue | undefined => {
    let node: JsonValue | undefined = root;
    for (const key of keys) {
      if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
      node = (node as Container & Record<string, JsonValue>)[key];
    }
    // Containers on a written spine are mutable: hand out a frozen copy, never the live node.
    return node !== null && typeof node === 'object' && !Object.isFrozen(node) ? frozenJson(node, 'the world') : node;
  };

  const assertFree = (keys: PathKeys, verb: string): void => {
    if (locks.isLocked(keys)) {
      throw new WorldError('world_locked', `cannot ${verb} "${pathText(keys)}" while an update holds it; use world.update for read-modify-write`);
    }
  };

  const write = (keys: PathKeys, value: JsonValue | undefined, writer: WorldWriter | undefined): void => {
    if (keys.length === 0) {
      if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new WorldError('world_value', 'the whole world must be replaced by an object');
      }
      root = thaw(value) as { [key: string]: JsonValue };
    } else {
      const parent = spine(keys, value !== undefined);
      if (parent === undefined) return;
      const key = keys[keys.length - 1]!;
      if (Array.isArray(parent)) writeIndex(parent, key, value, keys);
      else if (value === undefined) delete parent[key];
      else parent[key] = value;
    }
    onChange(pathText(keys), value, writer);
  };

  // The parent container of the last key, made writable along the way (and created, if asked).
  const spine = (keys: PathKeys, create: boolean): Container | undefined => {
    let node: Container = root;
    for (let index = 0; index < keys.length - 1; index++) {
      const key = keys[index]!;
      let child = Array.isArray(node) ? node[Number(key)] : Object.hasOwn(node, key) ? node[key] : undefined;
      if (child === undefined) {
        if (!create) return undefined;
        child = {};
      } else if (child === null || typeof child !== 'object') {
        throw new WorldError('world_path', `"${pathText(keys.slice(0, index + 1))}" holds a ${child === null ? 'null' : typeof child}, not an object or array`);
      }
      if (Object.isFrozen(child)) child = thaw(child);
      if (Array.isArray(node)) writeIndex(node, key, child, keys);
      else node[key] = child;
      node = child as Container;
    }
    return node;
  };

  const world: WorldState = {
    get: (path = '') => read(pathKeys(path)),
    has: (path) => read(pathKeys(path)) !== undefined,
    set(path, value, writer) {
      const keys = pathKeys(path);
      assertFree(keys, 'set');
      write(keys, frozenJson(value, `the value for "${pathText(keys)}"`), writer);
    },
    delete(path, writer) {
      const keys = pathKeys(path);
      assertFree(keys, 'delete');
      if (read(keys) === undefined) return false;
      write(keys, undefined, writer);
      return true;
    },
    async update(path, fn, options = {}) {
      const keys = pathKeys(path);
      const held = holding.getStore();
      assertNotNested(held, keys);
      const release = await locks.acquire(keys, options.signal);
      try {
        const next = await holding.run(held === undefined ? [keys] : [...held, keys], () => fn(read(keys)));
        if (next !== undefined) write(keys, frozenJson(next, `the value for "${pathText(keys)}"`), options);
        return next;
      } finally {
        release();
      }
    },
    snapshot: () => read([])!,
  };
  return world;
}

function thaw(node: Container): Container {
  return Array.isArray(node) ? [...node] : { ...node };
}

function writeIndex(array: JsonValue[], key: string, value: JsonValue | undefined, keys: PathKeys): void {
  const index = Number(key);
  if (!/^(0|[1-9]\d*)$/.test(key) || index > array.length) {
    throw new WorldError('world_path', `"${pathText(keys)}": "${key}" is not an index of an array of ${array.length}`);
  }
  if (value === undefined) array.splice(index, 1);
  else array[index] = value;
}
