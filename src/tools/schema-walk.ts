/**
 * Small readers of JSON Schema shared by argument normalization, the manifest and example calls:
 * local `$ref` resolution with cycle guards, declared types, and the subschema for a property or
 * an array item. Every lookup is by own property, so hostile names never reach a prototype.
 */
import type { JsonSchema } from './types.js';

/** A subschema and its JSON pointer inside the tool's parameters (the pointer keys branch validators). */
export type SchemaNode = { schema: JsonSchema | boolean | undefined; pointer: string };

/** `$ref` chains longer than this are treated as cycles. */
export const MAX_REF_HOPS = 32;

/** The JSON types AJV knows, in the order text is tried against a union (string last: it always fits). */
export const TYPE_PRIORITY = ['null', 'boolean', 'integer', 'number', 'array', 'object', 'string'] as const;

/** Escapes one JSON-pointer segment (RFC 6901). */
export function pointerSegment(key: string): string {
  // Nearly every key needs no escape; skipping `replaceAll` keeps the hot path free of work.
  if (!key.includes('~') && !key.includes('/')) return key;
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** An own property of a schema object, or `undefined`. */
export function own(schema: unknown, key: string): unknown {
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema) && Object.hasOwn(schema, key)
    ? (schema as JsonSchema)[key]
    : undefined;
}

/** True for a non-array object. */
export function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Follows local `$ref`s (`#/…`) from `node` until a schema without one; `undefined` pointer-wise
 * when a reference is remote, dangling or cyclic (AJV has refused those at registration already).
 */
export function resolveNode(root: JsonSchema, node: SchemaNode): SchemaNode {
  let current = node;
  for (let hop = 0; hop < MAX_REF_HOPS; hop += 1) {
    const ref = own(current.schema, '$ref');
    if (typeof ref !== 'string') return current;
    if (!ref.startsWith('#')) return { schema: undefined, pointer: current.pointer };
    // Keys of branch validators are plain JSON pointers; `$ref` fragments are URI-encoded.
    let pointer: string;
    try {
      pointer = decodeURIComponent(ref.slice(1));
    } catch {
      return { schema: undefined, pointer: current.pointer };
    }
    current = { schema: atPointer(root, pointer), pointer };
  }
  return { schema: undefined, pointer: current.pointer };
}

/** Convenience form of `resolveNode` for callers that do not track pointers. */
export function resolveSchema(root: JsonSchema, schema: unknown): JsonSchema | boolean | undefined {
  return resolveNode(root, { schema: schema as JsonSchema | boolean | undefined, pointer: '' }).schema;
}

/** The value at a JSON pointer (RFC 6901, already URI-decoded). */
export function atPointer(root: JsonSchema, pointer: string): JsonSchema | boolean | undefined {
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  let current: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      current = own(current, segment);
    }
    if (current === undefined) return undefined;
  }
  return current as JsonSchema | boolean;
}

/**
 * The JSON types a (resolved) schema admits: its `type`, else the types of its `enum`/`const`
 * values, else the union over `anyOf`/`oneOf` branches, else the first typed `allOf` entry; `[]`
 * means any type.
 */
export function schemaTypes(root: JsonSchema, schema: unknown, depth = 0): string[] {
  if (!isObject(schema) || depth > MAX_REF_HOPS) return [];
  const declared = own(schema, 'type');
  if (typeof declared === 'string') return [declared];
  if (Array.isArray(declared)) return declared.filter((type): type is string => typeof type === 'string');
  const values = Object.hasOwn(schema, 'const') ? [own(schema, 'const')] : own(schema, 'enum');
  if (Array.isArray(values)) return [...new Set(values.map(jsonTypeOf))];
  for (const key of ['anyOf', 'oneOf']) {
    const branches = own(schema, key);
    if (!Array.isArray(branches)) continue;
    const union = new Set<string>();
    for (const branch of branches) {
      const types = schemaTypes(root, resolveSchema(root, branch), depth + 1);
      if (types.length === 0) return [];
      for (const type of types) union.add(type);
    }
    return [...union];
  }
  const all = own(schema, 'allOf');
  if (Array.isArray(all)) {
    for (const entry of all) {
      const types = schemaTypes(root, resolveSchema(root, entry), depth + 1);
      if (types.length > 0) return types;
    }
  }
  return [];
}

/** The JSON type name of a value (`integer` for whole numbers). */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * The subschema for property `name` of an object schema: `properties`, then `allOf` entries, then a
 * matching `patternProperties`, then `additionalProperties`. `declared` says whether the name is
 * known; `closed` whether unknown names are forbidden (`additionalProperties: false`).
 */
export function propertyNode(root: JsonSchema, node: SchemaNode, name: string): { child: SchemaNode; declared: boolean; closed: boolean } {
  const found = findProperty(root, node, name, 0);
  if (found !== undefined) return { child: found, declared: true, closed: false };
  const patterns = own(node.schema, 'patternProperties');
  if (isObject(patterns)) {
    for (const [pattern, schema] of Object.entries(patterns)) {
      if (safeTest(pattern, name)) {
        return { child: { schema: schema as JsonSchema, pointer: `${node.pointer}/patternProperties/${pointerSegment(pattern)}` }, declared: true, closed: false };
      }
    }
  }
  const additional = own(node.schema, 'additionalProperties');
  if (additional === false) return { child: { schema: undefined, pointer: node.pointer }, declared: false, closed: true };
  if (isObject(additional)) {
    return { child: { schema: additional, pointer: `${node.pointer}/additionalProperties` }, declared: false, closed: false };
  }
  return { child: { schema: undefined, pointer: node.pointer }, declared: false, closed: false };
}

function findProperty(root: JsonSchema, node: SchemaNode, name: string, depth: number): SchemaNode | undefined {
  const properties = own(node.schema, 'properties');
  if (isObject(properties) && Object.hasOwn(properties, name)) {
    return { schema: properties[name] as JsonSchema, pointer: `${node.pointer}/properties/${pointerSegment(name)}` };
  }
  const all = own(node.schema, 'allOf');
  if (!Array.isArray(all) || depth > MAX_REF_HOPS) return undefined;
  for (let index = 0; index < all.length; index += 1) {
    const entry = resolveNode(root, { schema: all[index] as JsonSchema, pointer: `${node.pointer}/allOf/${index}` });
    const found = findProperty(root, entry, name, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Every property name an object schema declares (own `properties` and `allOf` entries). */
export function declaredProperties(root: JsonSchema, schema: unknown, depth = 0): string[] {
  const names = new Set<string>();
  const properties = own(schema, 'properties');
  if (isObject(properties)) for (const key of Object.keys(properties)) names.add(key);
  const all = own(schema, 'allOf');
  if (Array.isArray(all) && depth <= MAX_REF_HOPS) {
    for (const entry of all) for (const key of declaredProperties(root, resolveSchema(root, entry), depth + 1)) names.add(key);
  }
  return [...names];
}

/** The subschema for item `index` of an array schema (`prefixItems`/tuple `items`, then `items`/`additionalItems`). */
export function itemNode(node: SchemaNode, index: number): SchemaNode {
  const prefix = own(node.schema, 'prefixItems');
  if (Array.isArray(prefix) && index < prefix.length) {
    return { schema: prefix[index] as JsonSchema, pointer: `${node.pointer}/prefixItems/${index}` };
  }
  const items = own(node.schema, 'items');
  if (Array.isArray(items)) {
    if (index < items.length) return { schema: items[index] as JsonSchema, pointer: `${node.pointer}/items/${index}` };
    const additional = own(node.schema, 'additionalItems');
    return { schema: isObject(additional) ? additional : undefined, pointer: `${node.pointer}/additionalItems` };
  }
  if (isObject(items)) return { schema: items, pointer: `${node.pointer}/items` };
  return { schema: undefined, pointer: node.pointer };
}

function safeTest(pattern: string, name: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(name);
  } catch {
    return false;
  }
}
