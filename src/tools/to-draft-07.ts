/**
 * `toDraft07`: rewrites the JSON Schema 2020-12 (and 2019-09) forms of a tool's parameters into
 * their draft-07 equivalents, so one AJV pipeline — draft-07 options, the secure meta-schema,
 * argument conversion, the manifest — serves schemas written for either draft. `z.toJSONSchema()`
 * and most current generators write 2020-12.
 */
import { ToolSchemaError } from '../errors.js';
import { pointerSegment } from './schema-walk.js';
import type { JsonSchema } from './types.js';

/** `$schema` values of draft-07: the rewritten schema drops them too (it is draft-07 throughout). */
const DRAFT_07: ReadonlySet<string> = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']);

/** `$schema` values of the later drafts; the rewritten schema drops them. */
const LATER_DRAFTS: ReadonlySet<string> = new Set([
  'https://json-schema.org/draft/2020-12/schema',
  'https://json-schema.org/draft/2020-12/schema#',
  'https://json-schema.org/draft/2019-09/schema',
  'https://json-schema.org/draft/2019-09/schema#',
]);

/** Later-draft keywords draft-07 has no equivalent for, and what to write instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  $anchor: 'refer to the subschema by a JSON pointer ("$ref": "#/$defs/name") instead',
  $dynamicRef: 'use a plain "$ref"',
  $dynamicAnchor: 'use a plain "$ref"',
  $recursiveRef: 'use a plain "$ref"',
  $recursiveAnchor: 'use a plain "$ref"',
  $vocabulary: 'remove it',
  minContains: 'remove it, or check the count in execute',
  maxContains: 'remove it, or check the count in execute',
};

const SCHEMA_VALUED = ['additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'not', 'if', 'then', 'else'];
const SCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions'];
/** Keywords whose subschemas may evaluate properties or items that `unevaluated*` would then skip. */
const APPLICATORS = ['allOf', 'anyOf', 'oneOf', 'not', 'if', '$ref', 'dependentSchemas'];

/** Keywords `convert` rewrites after copying the others. */
const REWRITTEN = ['items', 'prefixItems', 'dependentRequired', 'dependentSchemas', 'unevaluatedProperties', 'unevaluatedItems'];

/** Beyond this nesting the schema is left as it is; the registration checks report it. */
const MAX_DEPTH = 64;

type Context = { toolName: string; later: boolean; seen: Set<object> };

/**
 * A copy of `schema` in draft-07 forms: `prefixItems` becomes tuple `items` (and 2020-12 `items`
 * beside it `additionalItems`), `dependentRequired` and `dependentSchemas` become `dependencies`,
 * `unevaluatedProperties`/`unevaluatedItems` on a schema with no applicators become
 * `additionalProperties`/`additionalItems`, and a `$schema` naming draft-07, 2019-09 or 2020-12 is dropped. `$defs`
 * stays: AJV resolves it under draft-07 too. Draft-07 schemas come back unchanged. Throws
 * `ToolSchemaError` for a later-draft form draft-07 cannot express (`$dynamicRef`, `minContains`, …).
 *
 * @example
 * toDraft07({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { at: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } } }, 'move');
 * // { type: 'object', properties: { at: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false } } }
 */
export function toDraft07(schema: unknown, toolName: string): unknown {
  const declared = typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? (schema as JsonSchema)['$schema'] : undefined;
  const later = typeof declared === 'string' && LATER_DRAFTS.has(declared);
  return convert(schema, '', 0, { toolName, later, seen: new Set() });
}

function convert(schema: unknown, path: string, depth: number, context: Context): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  // Cycles and extreme nesting are refused by the registration checks, with their own message.
  if (context.seen.has(schema) || depth > MAX_DEPTH) return schema;
  context.seen.add(schema);
  const node = schema as JsonSchema;
  const fail = (message: string): never => {
    throw new ToolSchemaError(context.toolName, `parameters at ${path || '/'}: ${message}`);
  };
  const child = (value: unknown, key: string): unknown => convert(value, `${path}/${key}`, depth + 1, context);
  const out: JsonSchema = {};

  for (const [key, value] of Object.entries(node)) {
    if (Object.hasOwn(UNSUPPORTED, key)) fail(`"${key}" (JSON Schema 2019-09/2020-12) has no draft-07 equivalent; ${UNSUPPORTED[key]}`);
    // Dropped where it names a draft this reads: the copy is draft-07 throughout, which AJV assumes,
    // and the providers' function-calling schemas have no use for the key.
    if (key === '$schema' && typeof value === 'string' && (LATER_DRAFTS.has(value) || DRAFT_07.has(value))) continue;
    if (SCHEMA_VALUED.includes(key)) put(out, key, child(value, key));
    else if (SCHEMA_ARRAYS.includes(key) && Array.isArray(value)) put(out, key, value.map((item, index) => child(item, `${key}/${index}`)));
    else if (SCHEMA_MAPS.includes(key) && isMap(value)) put(out, key, mapValues(value, (item, name) => child(item, `${key}/${pointerSegment(name)}`)));
    else if (key === 'dependencies' && isMap(value)) put(out, key, mapValues(value, (item, name) => (Array.isArray(item) ? item : child(item, `${key}/${pointerSegment(name)}`))));
    else if (!REWRITTEN.includes(key)) put(out, key, value);
  }

  convertItems(node, out, child, context, fail);
  convertDependencies(node, out, child, fail);
  convertUnevaluated(node, out, child, fail);
  context.seen.delete(schema);
  return out;
}

type Child = (value: unknown, key: string) => unknown;
type Fail = (message: string) => never;

function convertItems(node: JsonSchema, out: JsonSchema, child: Child, context: Context, fail: Fail): void {
  const hasItems = Object.hasOwn(node, 'items');
  const items = node['items'];
  if (Object.hasOwn(node, 'prefixItems')) {
    const prefix = node['prefixItems'];
    if (!Array.isArray(prefix)) return fail('"prefixItems" must be an array of schemas');
    if (Array.isArray(items)) fail('"prefixItems" with an array "items" mixes drafts; in 2020-12, "items" is one schema for the items after the prefix');
    if (Object.hasOwn(node, 'additionalItems')) fail('"prefixItems" with "additionalItems" mixes drafts; in 2020-12, write the schema for the items after the prefix as "items"');
    out['items'] = prefix.map((item, index) => child(item, `prefixItems/${index}`));
    if (hasItems) out['additionalItems'] = child(items, 'items');
    return;
  }
  if (!hasItems) return;
  if (Array.isArray(items)) {
    if (context.later) fail('"items" is an array, which 2020-12 does not allow (this schema declares 2020-12); write the tuple as "prefixItems"');
    out['items'] = items.map((item, index) => child(item, `items/${index}`));
  } else {
    out['items'] = child(items, 'items');
  }
}

function convertDependencies(node: JsonSchema, out: JsonSchema, child: Child, fail: Fail): void {
  for (const key of ['dependentRequired', 'dependentSchemas']) {
    if (!Object.hasOwn(node, key)) continue;
    const map = node[key];
    if (!isMap(map)) return fail(`"${key}" must be an object`);
    const dependencies = isMap(out['dependencies']) ? out['dependencies'] : {};
    for (const [name, value] of Object.entries(map)) {
      if (Object.hasOwn(dependencies, name)) fail(`"${name}" appears in both "${key}" and another dependency keyword; merge them into one`);
      put(dependencies, name, key === 'dependentRequired' ? value : child(value, `${key}/${pointerSegment(name)}`));
    }
    out['dependencies'] = dependencies;
  }
}

function convertUnevaluated(node: JsonSchema, out: JsonSchema, child: Child, fail: Fail): void {
  for (const [key, target] of [['unevaluatedProperties', 'additionalProperties'], ['unevaluatedItems', 'additionalItems']] as const) {
    if (!Object.hasOwn(node, key)) continue;
    const value = node[key];
    if (value === true) continue; // no constraint at all
    const applicator = APPLICATORS.find((name) => Object.hasOwn(node, name));
    if (applicator !== undefined) {
      fail(`"${key}" beside "${applicator}" has no draft-07 equivalent; put "${target}" on the schema that declares the ${key === 'unevaluatedProperties' ? 'properties' : 'items'}`);
    }
    if (Object.hasOwn(out, target)) fail(`"${key}" beside "${target}" says the same thing twice; keep "${target}"`);
    // Items are all evaluated by a single `items` schema, so there is nothing left to constrain.
    if (key === 'unevaluatedItems' && Object.hasOwn(out, 'items') && !Array.isArray(out['items'])) continue;
    out[target] = child(value, key);
  }
}

function isMap(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mapValues(map: JsonSchema, each: (value: unknown, name: string) => unknown): JsonSchema {
  const out: JsonSchema = {};
  for (const [name, value] of Object.entries(map)) put(out, name, each(value, name));
  return out;
}

/**
 * Sets an own data property. Plain assignment of a key named `__proto__` (which `JSON.parse`
 * makes as an own key) would change the copy's prototype instead; the registration checks must
 * see the key to refuse it.
 */
function put(target: JsonSchema, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
