import { WorldError } from '../errors.js';
import type { JsonValue } from './world-types.js';

const MAX_DEPTH = 64;

/**
 * A deep, frozen copy of `value`, checked to be plain JSON: objects (plain, no accessors), arrays,
 * finite numbers, strings, booleans and null. Anything else — `undefined`, functions, BigInt,
 * NaN, class instances, cycles — throws a WorldError naming where it was found, so nothing that
 * cannot be logged and replayed ever enters the world.
 */
export function frozenJson(value: unknown, where: string): JsonValue {
  return copy(value, where, 0);
}

function copy(value: unknown, where: string, depth: number): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new WorldError('world_value', `${where} is ${value}, which JSON cannot hold`);
    return value;
  }
  if (typeof value !== 'object') throw new WorldError('world_value', `${where} is a ${typeof value}, which JSON cannot hold`);
  if (depth >= MAX_DEPTH) throw new WorldError('world_value', `${where} is nested deeper than ${MAX_DEPTH} levels (or is circular)`);
  if (Object.isFrozen(value) && FROZEN_OK.has(value)) return value as JsonValue;
  if (Array.isArray(value)) {
    const items: JsonValue[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) items[index] = copy(value[index], `${where}[${index}]`, depth + 1);
    return remember(Object.freeze(items)) as JsonValue;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    throw new WorldError('world_value', `${where} is a ${prototype?.constructor?.name ?? 'non-plain'} object; only plain objects are JSON`);
  }
  const result: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)!;
    if (!('value' in descriptor)) throw new WorldError('world_value', `${where}.${key} is an accessor; only plain data is JSON`);
    if (key === '__proto__') throw new WorldError('world_value', `${where} has a "__proto__" key`);
    result[key] = copy(descriptor.value, `${where}.${key}`, depth + 1);
  }
  return remember(Object.freeze(result));
}

// Values this module copied and froze: passing one back in (a value read from the world, set
// elsewhere) shares it instead of copying it again. A WeakSet holds nothing alive.
const FROZEN_OK = new WeakSet<object>();

function remember<T extends object>(value: T): T {
  FROZEN_OK.add(value);
  return value;
}
