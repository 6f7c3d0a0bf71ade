/**
 * `defineTool`: checks a tool definition eagerly (the registration rules of docs/protocol.md and
 * every option), compiles its parameters once, and returns an inert, frozen `Tool`.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { ToolSchemaError } from '../errors.js';
import { checkToolSchema, nameProblem, type CompiledParameters } from './check-tool-schema.js';
import { aliasReservedParameters } from './parameter-aliases.js';
import { readParameters } from './read-parameters.js';
import { resolveSchema, schemaTypes } from './schema-walk.js';
import { suggestName } from './suggest-name.js';
import type { ArgsOf, JsonSchema, RetryPolicy, Tool, ToolDefinition, ToolOptions, ToolParameters } from './types.js';
import { checkRetryPolicy, DEFAULT_BACKOFF_MS, DEFAULT_MAX_BACKOFF_MS, MAX_TIMER_MS } from './retry-policy.js';

/** What an option left out means (applied by the dispatcher). `concurrency` has none: no per-tool limit. */
export const TOOL_DEFAULTS = Object.freeze({
  readOnly: false,
  timeoutMs: 30_000,
  idempotent: false,
  needsApproval: false,
  needsResultApproval: false,
  verbatimParams: Object.freeze([]) as readonly string[],
  retry: Object.freeze({ attempts: 1, backoffMs: DEFAULT_BACKOFF_MS, maxBackoffMs: DEFAULT_MAX_BACKOFF_MS }) as Readonly<Required<RetryPolicy>>,
});

const OPTION_NAMES = [
  'kind', 'name', 'description', 'parameters', 'readOnly', 'timeoutMs', 'retry', 'idempotent',
  'needsApproval', 'needsResultApproval', 'prepareArguments', 'verbatimParams', 'concurrency', 'execute',
];

// Immutable association from a tool to its compiled validators: a Tool stays plain frozen data.
const compiled = new WeakMap<object, CompiledParameters>();
// The Standard Schema behind a tool's converted parameters, keyed by that frozen JSON Schema: a
// copy of the tool (`{ ...tool }`) keeps the object, so defining the copy keeps the refinements.
const standardOf = new WeakMap<object, StandardSchemaV1>();

/**
 * Defines a tool: validates every option, compiles `parameters` with AJV once, and returns a frozen
 * `Tool` (options left out stay out; `TOOL_DEFAULTS` says what they mean). Throws `ToolSchemaError` (code
 * `tool_schema_rejected`) naming the tool, the option or schema path, and what is allowed.
 *
 * `parameters` is a JSON Schema (draft-07 or 2020-12) or a Standard Schema that can give its JSON
 * Schema (zod 4, arktype, valibot through `toStandardJsonSchema`); either types `execute`'s
 * arguments. A Standard Schema's own `validate` runs after AJV, and `execute` gets its output.
 *
 * @example
 * const lookupPlayer = defineTool({
 *   name: 'lookup_player',
 *   description: 'Find a player by id.',
 *   parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
 *   readOnly: true,
 *   execute: async ({ id }) => ({ id, name: 'Ana' }), // id: string
 * });
 */
export function defineTool<const TParameters extends ToolParameters, TOutput = unknown>(
  definition: ToolDefinition<TParameters, TOutput>,
): Tool<ArgsOf<TParameters>, TOutput> {
  if (typeof definition !== 'object' || definition === null) {
    throw new ToolSchemaError('(unnamed)', 'defineTool needs an object with name, description, parameters and execute');
  }
  const name = (definition as { name?: unknown }).name;
  const problem = nameProblem(name);
  if (problem !== undefined) {
    throw new ToolSchemaError(typeof name === 'string' ? name : '(unnamed)', `tool name ${JSON.stringify(name)}: ${problem}`);
  }
  const toolName = name as string;
  const fail = (message: string): never => {
    throw new ToolSchemaError(toolName, message);
  };

  for (const key of Object.keys(definition)) {
    if (OPTION_NAMES.includes(key)) continue;
    const near = suggestName(key, OPTION_NAMES);
    fail(`unknown option "${key}"${near === undefined ? '' : `; did you mean "${near}"?`} Options: ${OPTION_NAMES.slice(1).join(', ')}`);
  }
  if (typeof definition.description !== 'string') fail('description must be a string (the model reads it to choose the tool)');
  if (typeof definition.execute !== 'function') fail(`execute must be a function (args, context) => result, got ${typeof definition.execute}`);
  checkBoolean(definition.readOnly, 'readOnly', fail);
  checkBoolean(definition.idempotent, 'idempotent', fail);
  if (definition.needsApproval !== undefined && typeof definition.needsApproval !== 'boolean' && typeof definition.needsApproval !== 'function') {
    fail('needsApproval must be a boolean or a function (args) => boolean');
  }
  const resultApproval = definition.needsResultApproval;
  if (resultApproval !== undefined && typeof resultApproval !== 'boolean' && typeof resultApproval !== 'function') {
    fail('needsResultApproval must be a boolean or a function (output, args) => boolean');
  }
  if (definition.prepareArguments !== undefined && typeof definition.prepareArguments !== 'function') {
    fail(`prepareArguments must be a function (args, context) => args, got ${typeof definition.prepareArguments}`);
  }
  if (definition.timeoutMs !== undefined) checkTimeout(definition.timeoutMs, fail);
  if (definition.concurrency !== undefined) checkConcurrency(definition.concurrency, fail);
  const retry = definition.retry === undefined ? undefined : checkRetryPolicy(definition.retry, fail);

  const read = readParameters(toolName, definition.parameters);
  const standard = read.standard ?? standardOf.get(definition.parameters as object);
  const own = cloneJson(read.schema, toolName);
  // Parameters named like the <ACTION> format's own tags are offered to the model under an alias.
  const aliased = aliasReservedParameters(own);
  const parameters = deepFreeze(aliased?.schema ?? own);
  const checked = checkToolSchema(toolName, parameters);
  const validators: CompiledParameters = { ...checked, ...(standard !== undefined && { standard }), ...(aliased !== undefined && { aliases: aliased.aliases }) };
  if (standard !== undefined) standardOf.set(parameters, standard);
  const verbatimParams = checkVerbatim(aliasNames(definition.verbatimParams, aliased?.aliases), parameters, fail);

  // Options left out stay out: the dispatcher applies its defaults (`TOOL_DEFAULTS` documents them),
  // so an agent-wide default timeout can still reach tools that set none.
  const tool = Object.freeze({
    ...pick(definition),
    kind: 'tool' as const,
    name: toolName,
    parameters,
    ...(retry === undefined ? {} : { retry }),
    ...(verbatimParams === undefined ? {} : { verbatimParams }),
  }) as unknown as Tool<ArgsOf<TParameters>, TOutput>;
  compiled.set(tool, validators);
  return tool;
}

/** The validators `defineTool` compiled for a tool, or `undefined` for an object it did not make. */
export function compiledParametersOf(tool: object): CompiledParameters | undefined {
  return compiled.get(tool);
}

/** Parameter names as the model sees them (`action` → `action_`), for options that name parameters. */
function aliasNames(value: unknown, aliases: ReadonlyMap<string, string> | undefined): unknown {
  if (aliases === undefined || !Array.isArray(value)) return value;
  const toAlias = new Map([...aliases].map(([alias, name]) => [name, alias]));
  return value.map((name: unknown) => (typeof name === 'string' ? (toAlias.get(name) ?? name) : name));
}

/** The options the host set, without `undefined` entries and without unknown keys. */
function pick(definition: object): Partial<ToolOptions> {
  const copy: Record<string, unknown> = {};
  for (const key of OPTION_NAMES) {
    const value = (definition as Record<string, unknown>)[key];
    if (Object.hasOwn(definition, key) && value !== undefined) copy[key] = value;
  }
  return copy as Partial<ToolOptions>;
}

function checkBoolean(value: unknown, option: string, fail: (message: string) => never): void {
  if (value !== undefined && typeof value !== 'boolean') fail(`${option} must be true or false, got ${JSON.stringify(value)}`);
}

function checkTimeout(value: unknown, fail: (message: string) => never): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMER_MS) {
    fail(`timeoutMs must be an integer from 0 (no limit) to ${MAX_TIMER_MS}, got ${String(value)}`);
  }
}

function checkConcurrency(value: unknown, fail: (message: string) => never): void {
  const ok = value === Number.POSITIVE_INFINITY || (typeof value === 'number' && Number.isInteger(value) && value >= 1);
  if (!ok) fail(`concurrency must be an integer ≥ 1 or Infinity, got ${String(value)}`);
}

function checkVerbatim(value: unknown, parameters: JsonSchema, fail: (message: string) => never): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return fail('verbatimParams must be an array of parameter names');
  const properties = (Object.hasOwn(parameters, 'properties') ? parameters['properties'] : {}) as JsonSchema;
  const names = Object.keys(properties);
  for (const entry of value) {
    if (typeof entry !== 'string' || !Object.hasOwn(properties, entry)) {
      const near = typeof entry === 'string' ? suggestName(entry, names) : undefined;
      fail(
        `verbatimParams names ${JSON.stringify(entry)}, which is not a parameter${near === undefined ? '' : ` (did you mean "${near}"?)`}; parameters: ${names.join(', ') || '(none)'}`,
      );
    }
    const schema = resolveSchema(parameters, properties[entry as string]);
    if (!schemaTypes(parameters, schema).includes('string')) {
      fail(`verbatimParams names "${entry as string}", which is not a string parameter; only strings can be kept verbatim`);
    }
  }
  return Object.freeze([...new Set(value as string[])]);
}

/** A JSON copy of the schema, so later edits by the host cannot desynchronise the compiled validator. */
function cloneJson(value: unknown, toolName: string): JsonSchema {
  try {
    return structuredClone(value) as JsonSchema;
  } catch (error) {
    throw new ToolSchemaError(toolName, 'parameters must be plain JSON data (no functions, symbols or class instances)', { cause: error });
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
