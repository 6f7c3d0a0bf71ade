/**
 * An MCP tool's `inputSchema` made into parameters troupe registers: JSON Schema 2020-12 (and the
 * draft-04 habits some servers keep) rewritten as draft-07, and the keywords troupe would refuse
 * but the server checks anyway left to the server. The server stays the judge of its arguments:
 * troupe's check is the first line, which gives the model its corrections early.
 */
import { failure, success, type Outcome } from '../outcome.js';
import { KNOWN_FORMATS } from '../tools/ajv.js';
import { nameProblem } from '../tools/check-tool-schema.js';
import type { JsonSchema } from '../tools/types.js';

/** Parameters troupe can register, what was changed to get them, and root properties renamed. */
export type ConvertedSchema = {
  parameters: JsonSchema;
  /** One line per change, for the debug log (`/properties/url: "format" uri left to the server`). */
  changes: string[];
  /** Root properties renamed to fit the parameter-name rule: troupe name → the server's name. */
  renamed: ReadonlyMap<string, string>;
};

/** Nesting deeper than this is refused (the registration check refuses it too). */
const MAX_DEPTH = 64;
/** Characters of a dropped `pattern` quoted in the description. */
const MAX_QUOTED_PATTERN = 200;

const SCHEMA_VALUED = ['additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'not', 'if', 'then', 'else'];
const SCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf'];
const SCHEMA_MAPS = ['definitions', 'properties', 'patternProperties'];
/** 2019-09/2020-12 keywords with no draft-07 form that only narrow what is valid. */
const SERVER_ONLY = ['unevaluatedProperties', 'unevaluatedItems', 'minContains', 'maxContains'];

/**
 * Converts an MCP `inputSchema` to draft-07 parameters. What it does, in order:
 * `$schema` and the root `$id` are dropped; `$defs` become `definitions` (local `$ref`s follow);
 * `prefixItems` becomes a draft-07 tuple (`items` array, the old `items` as `additionalItems`);
 * `dependentRequired` and `dependentSchemas` become `dependencies`; boolean `exclusiveMinimum` /
 * `exclusiveMaximum` (draft-04) become numbers; `unevaluatedProperties`, `unevaluatedItems`,
 * `minContains` and `maxContains` are left to the server; a `pattern` or `format` on a string
 * without `maxLength`, a `format` troupe does not know, and `uniqueItems` on an array of objects
 * without `maxItems` are left to the server and named in the description; a root property whose
 * name breaks the parameter-name rule is renamed (`first name` → `first_name`, `action` →
 * `action_`) and mapped back on each call; a `required` name a typed object does not declare is
 * declared (`{}`). Anything else stays as it is, for `defineTool` to accept or refuse.
 */
export function convertSchema(input: unknown): Outcome<ConvertedSchema, string> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure('the input schema is not an object');
  let root: JsonSchema;
  try {
    root = structuredClone(input) as JsonSchema;
  } catch {
    return failure('the input schema is not plain JSON');
  }
  if (root['type'] !== 'object') return failure(`the input schema's type is ${JSON.stringify(root['type'])}; MCP tools take an object`);
  const changes: string[] = [];
  delete root['$id'];
  try {
    convertNode(root, '', 0, changes);
  } catch (error) {
    return failure((error as Error).message);
  }
  const renamed = renameRootProperties(root, changes);
  return success({ parameters: root, changes, renamed });
}

function convertNode(node: unknown, path: string, depth: number, changes: string[]): void {
  if (Array.isArray(node)) {
    node.forEach((item, index) => convertNode(item, `${path}/${index}`, depth + 1, changes));
    return;
  }
  if (!isObject(node)) return;
  if (depth > MAX_DEPTH) throw new Error(`the input schema is nested deeper than ${MAX_DEPTH} levels`);
  const at = path === '' ? '/' : path;
  if (Object.hasOwn(node, '$schema')) delete node['$schema'];
  rewriteRef(node);
  moveDefs(node, at, changes);
  moveTuple(node, at, changes);
  moveDependencies(node, at, changes);
  for (const key of ['exclusiveMinimum', 'exclusiveMaximum'] as const) fixExclusive(node, key);
  for (const key of SERVER_ONLY) {
    if (!Object.hasOwn(node, key)) continue;
    delete node[key];
    changes.push(`${at}: "${key}" left to the server (no draft-07 form)`);
  }
  leaveUnboundedToServer(node, at, changes);
  declareRequired(node, at, changes);

  const items = node['items'];
  if (Object.hasOwn(node, 'items')) convertNode(items, `${path}/items`, depth + 1, changes);
  for (const key of SCHEMA_VALUED) if (Object.hasOwn(node, key)) convertNode(node[key], `${path}/${key}`, depth + 1, changes);
  for (const key of SCHEMA_ARRAYS) if (Array.isArray(node[key])) convertNode(node[key], `${path}/${key}`, depth + 1, changes);
  for (const key of [...SCHEMA_MAPS, 'dependencies']) {
    const map = Object.hasOwn(node, key) ? node[key] : undefined;
    if (!isObject(map)) continue;
    for (const [name, value] of Object.entries(map)) {
      // `dependencies` mixes property lists (arrays of names) with schemas.
      if (key !== 'dependencies' || !Array.isArray(value)) convertNode(value, `${path}/${key}/${name}`, depth + 1, changes);
    }
  }
}

/** `#/$defs/x` → `#/definitions/x`, at any depth of the pointer. */
function rewriteRef(node: JsonSchema): void {
  const ref = node['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    node['$ref'] = ref.split('/').map((segment) => (segment === '$defs' ? 'definitions' : segment)).join('/');
  }
}

function moveDefs(node: JsonSchema, at: string, changes: string[]): void {
  if (!Object.hasOwn(node, '$defs')) return;
  const defs = node['$defs'];
  delete node['$defs'];
  if (!isObject(defs)) throw new Error(`at ${at}: "$defs" is not an object of schemas`);
  const definitions = isObject(node['definitions']) ? node['definitions'] : {};
  for (const [name, schema] of Object.entries(defs)) {
    if (Object.hasOwn(definitions, name)) throw new Error(`at ${at}: "$defs" and "definitions" both define "${name}"`);
    setOwn(definitions, name, schema);
  }
  node['definitions'] = definitions;
  changes.push(`${at}: "$defs" became "definitions"`);
}

function moveTuple(node: JsonSchema, at: string, changes: string[]): void {
  if (!Object.hasOwn(node, 'prefixItems')) return;
  const prefix = node['prefixItems'];
  if (!Array.isArray(prefix)) throw new Error(`at ${at}: "prefixItems" is not an array of schemas`);
  if (Object.hasOwn(node, 'items')) node['additionalItems'] = node['items'];
  node['items'] = prefix;
  delete node['prefixItems'];
  changes.push(`${at}: "prefixItems" became a draft-07 tuple ("items" array)`);
}

function moveDependencies(node: JsonSchema, at: string, changes: string[]): void {
  for (const key of ['dependentRequired', 'dependentSchemas']) {
    if (!Object.hasOwn(node, key)) continue;
    const map = node[key];
    delete node[key];
    if (!isObject(map)) throw new Error(`at ${at}: "${key}" is not an object`);
    const dependencies = isObject(node['dependencies']) ? node['dependencies'] : {};
    for (const [name, value] of Object.entries(map)) {
      if (Object.hasOwn(dependencies, name)) throw new Error(`at ${at}: "${key}" and "dependencies" both name "${name}"`);
      setOwn(dependencies, name, value);
    }
    node['dependencies'] = dependencies;
    changes.push(`${at}: "${key}" became "dependencies"`);
  }
}

/** Draft-04's `minimum: 5, exclusiveMinimum: true` is draft-07's `exclusiveMinimum: 5`. */
function fixExclusive(node: JsonSchema, key: 'exclusiveMinimum' | 'exclusiveMaximum'): void {
  const flag = node[key];
  if (typeof flag !== 'boolean') return;
  const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
  if (flag && typeof node[bound] === 'number') {
    node[key] = node[bound];
    delete node[bound];
  } else {
    delete node[key];
  }
}

/**
 * The secure meta-schema refuses a `pattern` or `format` that could run over a string of any
 * length, and `uniqueItems` over objects without a bound; strict AJV refuses formats it does not
 * know. troupe never runs a server's regular expression over unbounded input: these are left to
 * the server, which checks them anyway, and the description keeps them for the model.
 */
function leaveUnboundedToServer(node: JsonSchema, at: string, changes: string[]): void {
  const notes: string[] = [];
  const bounded = typeof node['maxLength'] === 'number';
  const format = node['format'];
  if (typeof format === 'string' && (!bounded || !KNOWN_FORMATS.includes(format))) {
    delete node['format'];
    notes.push(`format: ${format}`);
    changes.push(`${at}: "format" ${format} left to the server (${bounded ? 'a format troupe does not know' : 'no "maxLength"'})`);
  }
  const pattern = node['pattern'];
  if (typeof pattern === 'string' && !bounded) {
    delete node['pattern'];
    notes.push(`pattern: ${pattern.length > MAX_QUOTED_PATTERN ? `${pattern.slice(0, MAX_QUOTED_PATTERN)}…` : pattern}`);
    changes.push(`${at}: "pattern" left to the server (no "maxLength")`);
  }
  if (node['uniqueItems'] === true && typeof node['maxItems'] !== 'number' && !scalarItems(node['items'])) {
    delete node['uniqueItems'];
    notes.push('items must be unique');
    changes.push(`${at}: "uniqueItems" left to the server (no "maxItems")`);
  }
  if (notes.length === 0) return;
  const description = typeof node['description'] === 'string' && node['description'].trim() !== '' ? `${node['description'].trim()} ` : '';
  node['description'] = `${description}(${notes.join('; ')})`;
}

/** Whether array items are plain scalars, for which the secure meta-schema allows `uniqueItems`. */
function scalarItems(items: unknown): boolean {
  if (!isObject(items)) return false;
  const type = items['type'];
  const types = Array.isArray(type) ? type : [type];
  return types.length > 0 && types.every((entry) => typeof entry === 'string' && !['object', 'array'].includes(entry));
}

/** A `required` name missing from a typed object's `properties` is declared, as "any value". */
function declareRequired(node: JsonSchema, at: string, changes: string[]): void {
  const required = node['required'];
  const properties = node['properties'];
  if (node['type'] !== 'object' || !Array.isArray(required) || (properties !== undefined && !isObject(properties))) return;
  const declared = (properties ?? {}) as JsonSchema;
  for (const name of required) {
    if (typeof name !== 'string' || Object.hasOwn(declared, name)) continue;
    setOwn(declared, name, {});
    changes.push(`${at}: required "${name}" declared`);
  }
  if (properties === undefined && Object.keys(declared).length > 0) node['properties'] = declared;
}

/**
 * Root properties whose names cannot be XML element names or are reserved get names that can;
 * `required` and `dependencies` follow. The map leads back to the server's names.
 */
function renameRootProperties(root: JsonSchema, changes: string[]): Map<string, string> {
  const renamed = new Map<string, string>();
  const properties = root['properties'];
  if (!isObject(properties)) return renamed;
  const names = Object.keys(properties);
  const taken = new Set(names.filter((name) => nameProblem(name) === undefined));
  const rebuilt: JsonSchema = {};
  for (const name of names) {
    if (nameProblem(name) === undefined) {
      rebuilt[name] = properties[name];
      continue;
    }
    let candidate = parameterName(name);
    for (let copy = 2; taken.has(candidate) || nameProblem(candidate) !== undefined; copy++) candidate = `${parameterName(name).slice(0, 60)}_${copy}`;
    taken.add(candidate);
    renamed.set(candidate, name);
    rebuilt[candidate] = properties[name];
    changes.push(`/properties: "${name}" renamed "${candidate}"`);
  }
  if (renamed.size === 0) return renamed;
  const back = new Map([...renamed].map(([troupe, server]) => [server, troupe]));
  const rename = (name: unknown): unknown => (typeof name === 'string' ? (back.get(name) ?? name) : name);
  root['properties'] = rebuilt;
  if (Array.isArray(root['required'])) root['required'] = root['required'].map(rename);
  if (isObject(root['dependencies'])) {
    root['dependencies'] = Object.fromEntries(
      Object.entries(root['dependencies']).map(([key, value]) => [rename(key) as string, Array.isArray(value) ? value.map(rename) : value]),
    );
  }
  return renamed;
}

/** `first name` → `first_name`, `2fa` → `p2fa`, `action` → `action_`, `__proto__` → `p__proto__`. */
function parameterName(name: string): string {
  let mapped = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 63);
  if (!/^[A-Za-z]/.test(mapped)) mapped = `p${mapped}`.slice(0, 64);
  return nameProblem(mapped) === undefined ? mapped : `${mapped.slice(0, 63)}_`;
}

/** Sets an own property, even one named `__proto__` (a server's names are data, not code). */
function setOwn(target: JsonSchema, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
