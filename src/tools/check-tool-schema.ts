/**
 * Registration checks of docs/protocol.md rule 18: tool and property names, the secure meta-schema, and
 * compilation under the options of rule 16. Everything here throws `ToolSchemaError` at define time,
 * before any model sees the tool.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { ValidateFunction } from 'ajv';
import { ToolSchemaError, errorMessage } from '../errors.js';
import { isForbiddenName } from '../protocol/forbidden-names.js';
import { checkMetaSchemas, createAjv } from './ajv.js';
import { pointerSegment, resolveNode } from './schema-walk.js';
import { valueProblem } from './value-problem.js';
import type { JsonSchema } from './types.js';

/** Tool and property names: valid XML names and valid OpenAI/Anthropic function names. */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Names whose closing tag would end or hide the `<ACTION>` block, in any letter case. */
export const RESERVED_NAMES: readonly string[] = Object.freeze(['action', 'observation', 'think', 'thinking']);

/** The key under which each tool's parameters are added to its AJV instance. */
const ROOT_KEY = 'troupe:parameters';

/** Nesting beyond this in a tool schema is a host bug (or a cyclic object). */
const MAX_SCHEMA_DEPTH = 64;

/** A tool's parameters compiled once: the validator plus one per `anyOf`/`oneOf` branch. */
export type CompiledParameters = {
  validate: ValidateFunction;
  /** Branch validators keyed by the branch's JSON pointer in the parameters (`/properties/x/anyOf/1`). */
  branches: ReadonlyMap<string, ValidateFunction>;
  /** The Standard Schema the tool was defined with, whose `validate` runs after AJV accepts. */
  standard?: StandardSchemaV1;
  /** Parameters offered to the model under another name: the model's name → the tool's own. */
  aliases?: ReadonlyMap<string, string>;
  /** The every-error validator, made at the first rejection (`null`: it would not compile). */
  allErrors?: ValidateFunction | null;
};

/**
 * Why a name cannot be a tool or property name, or `undefined` when it can.
 *
 * @example
 * nameProblem('Action'); // 'reserved name (its closing tag would end the <ACTION> block)'
 */
export function nameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return `must be a string, got ${typeof name}`;
  if (isForbiddenName(name)) return 'a property of Object.prototype (or "prototype"), which could pollute objects';
  if (!TOOL_NAME_PATTERN.test(name)) {
    return 'must match ^[A-Za-z][A-Za-z0-9_-]{0,63}$ (a letter, then up to 63 letters, digits, "_" or "-")';
  }
  const lower = name.toLowerCase();
  if (RESERVED_NAMES.includes(lower)) {
    return lower === 'action'
      ? 'reserved name (its closing tag would end the <ACTION> block)'
      : `reserved name (<${lower}> hides the text inside it from the parser)`;
  }
  return undefined;
}

/**
 * Maps an MCP-style qualified name (`server.tool`) to a troupe tool name (`server__tool`).
 *
 * Dots become `__`; any other character outside `[A-Za-z0-9_-]` becomes `_`; a name that does not
 * start with a letter gets a `t` in front. The result is not checked: `defineTool` does that (it is
 * still too long past 64 characters).
 */
export function toToolName(qualifiedName: string): string {
  const mapped = qualifiedName.replaceAll('.', '__').replace(/[^A-Za-z0-9_-]/g, '_');
  return /^[A-Za-z]/.test(mapped) ? mapped : `t${mapped}`;
}

/**
 * Checks a tool's `parameters` by rule 18 and compiles them; throws `ToolSchemaError` naming the
 * offending path and what is allowed.
 */
export function checkToolSchema(toolName: string, parameters: unknown): CompiledParameters {
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
    throw new ToolSchemaError(toolName, 'parameters must be a JSON Schema object like { type: "object", properties: { … } }');
  }
  const root = parameters as JsonSchema;
  if (root['type'] !== 'object') {
    throw new ToolSchemaError(
      toolName,
      `parameters at /: must have type "object" (got ${JSON.stringify(root['type'])}); the arguments of a call are always an object`,
    );
  }
  const walk = { toolName, root, branchPointers: [] as string[], defsSchemas: [] as Array<[string, unknown]> };
  walkSchema(root, '', 0, new Set(), walk);

  const meta = checkMetaSchemas(root);
  if (meta !== undefined) throw new ToolSchemaError(toolName, `parameters at ${meta.path}: ${meta.message}`);
  // Draft-07 meta-schemas do not descend into `$defs`, which AJV still honours: check those too.
  for (const [path, schema] of walk.defsSchemas) {
    const fault = checkMetaSchemas(schema, path);
    if (fault !== undefined) throw new ToolSchemaError(toolName, `parameters at ${fault.path}: ${fault.message}`);
  }

  const ajv = createAjv();
  try {
    ajv.addSchema(root, ROOT_KEY);
    const validate = ajv.getSchema(ROOT_KEY);
    if (validate === undefined) throw new Error('AJV returned no validator');
    const branches = new Map<string, ValidateFunction>();
    for (const pointer of walk.branchPointers) {
      const branch = ajv.getSchema(`${ROOT_KEY}#${pointer.split('/').map(encodeURIComponent).join('/')}`);
      if (branch !== undefined) branches.set(pointer, branch);
    }
    probe(toolName, validate);
    return { validate, branches };
  } catch (error) {
    if (error instanceof ToolSchemaError) throw error;
    const message = errorMessage(error);
    // Whether a huge schema overflows the stack while AJV compiles it or when the result first
    // runs depends on frame sizes (JIT state); either way the schema is too large.
    if (error instanceof RangeError && /call stack/i.test(message)) throw tooLarge(toolName, message, error);
    throw new ToolSchemaError(toolName, `parameters do not compile under strict AJV (no coercion, no unknown keywords or formats: docs/protocol.md rule 16): ${message}`, {
      cause: error,
    });
  }
}

/**
 * Runs the fresh validator once on `{}`. AJV compiles a schema with a couple of thousand
 * properties into a function too large for the stack: it then throws on every call, so say so
 * at registration rather than fail each call later.
 */
function probe(toolName: string, validate: ValidateFunction): void {
  try {
    validate({});
  } catch (error) {
    throw tooLarge(toolName, errorMessage(error), error);
  }
}

function tooLarge(toolName: string, message: string, cause: unknown): ToolSchemaError {
  return new ToolSchemaError(
    toolName,
    `parameters compile to a validator that cannot run (${message}); the schema is too large — split the tool or group its properties`,
    { cause },
  );
}

type WalkState = { toolName: string; root: JsonSchema; branchPointers: string[]; defsSchemas: Array<[string, unknown]> };

const SCHEMA_VALUED = ['items', 'additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'not', 'if', 'then', 'else'];
const SCHEMA_ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAPS = ['$defs', 'definitions', 'patternProperties', 'dependencies', 'dependentSchemas'];

function walkSchema(schema: unknown, path: string, depth: number, seen: Set<object>, state: WalkState): void {
  if (typeof schema !== 'object' || schema === null) return; // booleans are schemas too; the meta-schema judges the rest
  if (seen.has(schema) || depth > MAX_SCHEMA_DEPTH) {
    throw new ToolSchemaError(state.toolName, `parameters at ${path || '/'}: the schema is cyclic or nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
  }
  seen.add(schema);
  if (Array.isArray(schema)) {
    schema.forEach((item, index) => walkSchema(item, `${path}/${index}`, depth + 1, seen, state));
    seen.delete(schema);
    return;
  }
  const node = schema as JsonSchema;
  const ref = own(node, '$ref');
  if (typeof ref === 'string' && ref.startsWith('#') && resolveNode(state.root, { schema: node, pointer: path }).schema === undefined) {
    throw new ToolSchemaError(state.toolName, `parameters at ${path || '/'}: "$ref": ${JSON.stringify(ref)} loops or points at nothing; it must lead to a schema in this document`);
  }
  const properties = own(node, 'properties');
  if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
    for (const [key, value] of Object.entries(properties)) {
      const at = `${path}/properties/${pointerSegment(key)}`;
      const problem = nameProblem(key);
      if (problem !== undefined) {
        throw new ToolSchemaError(state.toolName, `property ${JSON.stringify(key)} at ${at}: ${problem}; rename it`);
      }
      checkDefault(state.root, value, at, state.toolName);
      walkSchema(value, at, depth + 1, seen, state);
    }
  }
  for (const key of SCHEMA_VALUED) {
    if (Object.hasOwn(node, key)) walkSchema(node[key], `${path}/${key}`, depth + 1, seen, state);
  }
  for (const key of SCHEMA_ARRAYS) {
    const list = own(node, key);
    if (!Array.isArray(list)) continue;
    list.forEach((item, index) => {
      const at = `${path}/${key}/${index}`;
      if (key === 'anyOf' || key === 'oneOf') state.branchPointers.push(at);
      walkSchema(item, at, depth + 1, seen, state);
    });
  }
  for (const key of SCHEMA_MAPS) {
    const map = own(node, key);
    if (typeof map !== 'object' || map === null || Array.isArray(map)) continue;
    for (const [name, value] of Object.entries(map)) {
      const at = `${path}/${key}/${pointerSegment(name)}`;
      if (key === '$defs') state.defsSchemas.push([at, value]);
      walkSchema(value, at, depth + 1, seen, state);
    }
  }
  seen.delete(schema);
}

/**
 * A `default` its own property schema rejects would be filled in by AJV (`useDefaults`) and then
 * fail every call that leaves the parameter out.
 */
function checkDefault(root: JsonSchema, schema: unknown, path: string, toolName: string): void {
  if (typeof schema !== 'object' || schema === null || !Object.hasOwn(schema, 'default')) return;
  const value = (schema as JsonSchema)['default'];
  const problem = valueProblem(root, schema, value);
  if (problem !== undefined) {
    const nested = typeof value === 'object' && value !== null && !problem.startsWith(JSON.stringify(value));
    throw new ToolSchemaError(toolName, `property at ${path}: the default${nested ? "'s" : ''} ${problem}; fix the default or remove it`);
  }
}

function own(node: JsonSchema, key: string): unknown {
  return Object.hasOwn(node, key) ? node[key] : undefined;
}
