import { RESERVED_NAMES } from './check-tool-schema.js';
import type { JsonSchema } from './types.js';

/**
 * Top-level parameters whose names the `<ACTION>` format reserves (`action`, `observation`,
 * `think`, `thinking`: their tags would end the block or hide text from the parser) are offered to
 * the model under an alias, their name with `_` added (`action_`; `action_2`, … if that is taken
 * too). Returns the schema the model sees, with `required` and `dependencies` following, and the
 * aliases (the model's name → the tool's own); `undefined` when no name needs one. Real schemas
 * (function-calling benchmarks, MCP servers) have such parameters, so they are renamed rather than
 * refused; a nested property with a reserved name is still refused.
 */
export function aliasReservedParameters(schema: JsonSchema): { schema: JsonSchema; aliases: ReadonlyMap<string, string> } | undefined {
  const properties = schema['properties'];
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined;
  const names = Object.keys(properties);
  if (!names.some(isReserved)) return undefined;
  const taken = new Set(names);
  const aliases = new Map<string, string>();
  const renamed: JsonSchema = {};
  for (const name of names) {
    let alias = name;
    if (isReserved(name)) {
      alias = `${name}_`;
      for (let copy = 2; taken.has(alias); copy++) alias = `${name}_${copy}`;
      taken.add(alias);
      aliases.set(alias, name);
    }
    renamed[alias] = (properties as JsonSchema)[name];
  }
  const toAlias = new Map([...aliases].map(([alias, name]) => [name, alias]));
  const rename = (name: unknown): unknown => (typeof name === 'string' ? (toAlias.get(name) ?? name) : name);
  const modelSchema: JsonSchema = { ...schema, properties: renamed };
  if (Array.isArray(schema['required'])) modelSchema['required'] = schema['required'].map(rename);
  const dependencies = schema['dependencies'] ?? schema['dependentRequired'];
  if (typeof dependencies === 'object' && dependencies !== null && !Array.isArray(dependencies)) {
    const key = schema['dependencies'] !== undefined ? 'dependencies' : 'dependentRequired';
    modelSchema[key] = Object.fromEntries(Object.entries(dependencies).map(([name, value]) => [rename(name) as string, Array.isArray(value) ? value.map(rename) : value]));
  }
  return { schema: modelSchema, aliases };
}

/** Arguments as the model wrote them, under the tool's own parameter names. */
export function restoreParameterNames(args: Readonly<Record<string, unknown>>, aliases: ReadonlyMap<string, string>): Readonly<Record<string, unknown>> {
  const restored: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    // Defined, not assigned: a key named `__proto__` stays data.
    Object.defineProperty(restored, aliases.get(key) ?? key, { value, enumerable: true, writable: true, configurable: true });
  }
  return restored;
}

function isReserved(name: string): boolean {
  return RESERVED_NAMES.includes(name.toLowerCase());
}
