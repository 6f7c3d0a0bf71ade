/**
 * A small structural check of a JSON value against a schema (type, enum, const, nested properties
 * and items, anyOf/oneOf), for what registration must judge before any AJV validator exists:
 * `default` values, which AJV's `useDefaults` inserts without validating them.
 */
import { isObject, jsonTypeOf, own, resolveSchema, schemaTypes } from './schema-walk.js';
import type { JsonSchema } from './types.js';

const MAX_DEPTH = 32;

/** Why `value` could never satisfy `schema`, or `undefined` when this check finds nothing wrong. */
export function valueProblem(root: JsonSchema, schema: unknown, value: unknown, depth = 0): string | undefined {
  const resolved = resolveSchema(root, schema);
  if (!isObject(resolved) || depth > MAX_DEPTH) return undefined;
  const declared = own(resolved, 'type');
  const types = typeof declared === 'string' ? [declared] : Array.isArray(declared) ? (declared as string[]) : [];
  if (types.length > 0 && !types.some((type) => fitsType(value, type))) {
    return `${JSON.stringify(value)} is not of type ${types.join(' | ')}`;
  }
  const options = own(resolved, 'enum');
  if (Array.isArray(options) && !options.some((option) => sameJson(option, value))) return `${JSON.stringify(value)} is not one of its enum values`;
  if (Object.hasOwn(resolved, 'const') && !sameJson(own(resolved, 'const'), value)) return `${JSON.stringify(value)} is not its const value`;
  for (const key of ['anyOf', 'oneOf']) {
    const branches = own(resolved, key);
    if (Array.isArray(branches) && branches.every((branch) => valueProblem(root, branch, value, depth + 1) !== undefined)) {
      return `${JSON.stringify(value)} matches none of its ${key} forms (${schemaTypes(root, resolved).join(' | ') || 'any'})`;
    }
  }
  if (isObject(value)) {
    const properties = own(resolved, 'properties');
    for (const [key, item] of Object.entries(value)) {
      if (!isObject(properties) || !Object.hasOwn(properties, key)) continue;
      const problem = valueProblem(root, properties[key], item, depth + 1);
      if (problem !== undefined) return `"${key}": ${problem}`;
    }
  }
  if (Array.isArray(value)) {
    const items = own(resolved, 'items');
    for (const [index, item] of value.entries()) {
      const itemSchema = Array.isArray(items) ? items[index] : items;
      const problem = itemSchema === undefined ? undefined : valueProblem(root, itemSchema, item, depth + 1);
      if (problem !== undefined) return `item ${index}: ${problem}`;
    }
  }
  return undefined;
}

/** True when `value` is of JSON Schema type `type` (unknown type names fit: the meta-schema judges those). */
export function fitsType(value: unknown, type: unknown): boolean {
  if (typeof type !== 'string') return true;
  const actual = jsonTypeOf(value);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  if (['string', 'integer', 'boolean', 'null', 'array', 'object'].includes(type)) return actual === type;
  return true;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
