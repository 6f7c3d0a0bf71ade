import { WorldError } from '../errors.js';
import type { WorldPath } from './world-types.js';

/** A path split into its keys. */
export type PathKeys = readonly string[];

const MAX_PATH_DEPTH = 32;
const MAX_KEY_LENGTH = 256;
// Keys that would reach an object's prototype instead of its own data.
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

/** Splits and checks a path: dotted text or a list of keys. Throws a WorldError naming the problem. */
export function pathKeys(path: WorldPath): PathKeys {
  let keys: string[];
  if (typeof path === 'string') {
    keys = path === '' ? [] : path.split('.');
  } else if (Array.isArray(path)) {
    keys = path.map((key) => (typeof key === 'number' && Number.isSafeInteger(key) && key >= 0 ? String(key) : (key as string)));
  } else {
    throw new WorldError('world_path', `a world path is a dotted string or a list of keys, got ${typeof path}`);
  }
  if (keys.length > MAX_PATH_DEPTH) throw new WorldError('world_path', `world path "${shown(keys)}" is deeper than ${MAX_PATH_DEPTH} keys`);
  for (const key of keys) {
    if (typeof key !== 'string' || key === '') throw new WorldError('world_path', `world path "${shown(keys)}" has an empty or non-string key`);
    if (key.length > MAX_KEY_LENGTH) throw new WorldError('world_path', `a key of world path "${shown(keys)}" is longer than ${MAX_KEY_LENGTH} characters`);
    if (FORBIDDEN.has(key)) throw new WorldError('world_path', `world path "${shown(keys)}" uses the reserved key "${key}"`);
  }
  return keys;
}

/** The dotted form of a path, as `world.changed` reports it. */
export function pathText(keys: PathKeys): string {
  return keys.join('.');
}

/** Whether two paths touch the same data: one is a prefix of (or equal to) the other. */
export function overlaps(a: PathKeys, b: PathKeys): boolean {
  const shorter = Math.min(a.length, b.length);
  for (let index = 0; index < shorter; index++) if (a[index] !== b[index]) return false;
  return true;
}

function shown(keys: readonly unknown[]): string {
  const text = keys.map(String).join('.');
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/**
 * Throws when an update of `keys` is asked for inside an update that holds an overlapping path:
 * waiting for a lock the very same update holds would wait for ever, so it is said instead.
 */
export function assertNotNested(held: readonly PathKeys[] | undefined, keys: PathKeys): void {
  const clash = held?.find((other) => overlaps(other, keys));
  if (clash !== undefined) {
    throw new WorldError('world_locked', `update of "${pathText(keys)}" inside an update of "${pathText(clash)}" would wait for itself; update the outer path once`);
  }
}
