/**
 * The registry: an agent's tools by name, with their compiled validators. Lookups go through a
 * `Map`, so a model-written name like `__proto__` or `constructor` finds nothing.
 */
import { ConfigError } from '../errors.js';
import type { CompiledParameters } from './check-tool-schema.js';
import { compiledParametersOf, defineTool } from './define-tool.js';
import type { Tool } from './types.js';

/** The tools one agent can see, by exact name. */
export type Registry = {
  /** The tool registered under exactly this name (no case folding), or `undefined`. */
  get(name: string): Tool | undefined;
  /** Registered names, in registration order. */
  names(): string[];
  /** Registered tools, in registration order. */
  tools(): readonly Tool[];
  /** The validators compiled for a registered tool. */
  validatorOf(tool: Tool): CompiledParameters;
};

/**
 * Creates a registry from tools made by `defineTool`. Throws `ConfigError` with code
 * `duplicate_tool` when two tools share a name, and `ToolSchemaError` when an object that did not
 * come from `defineTool` fails its checks (such objects are re-checked and compiled here).
 *
 * @example
 * const registry = createRegistry([lookupPlayer]);
 * registry.get('lookup_player'); // the tool
 * registry.get('__proto__');     // undefined
 */
export function createRegistry(tools: readonly Tool[]): Registry {
  if (!Array.isArray(tools)) throw new ConfigError(`tools must be an array of tools made by defineTool, got ${typeof tools}`);
  const byName = new Map<string, Tool>();
  const validators = new Map<Tool, CompiledParameters>();
  tools.forEach((candidate, index) => {
    if (typeof candidate !== 'object' || candidate === null || (candidate as { kind?: unknown }).kind !== 'tool') {
      throw new ConfigError(`tools[${index}] is not a tool; make it with defineTool({ name, description, parameters, execute })`);
    }
    let tool = candidate;
    let compiled = compiledParametersOf(tool);
    if (compiled === undefined) {
      // A copy (`{ ...tool }`) loses the association with its validators: check it again.
      tool = defineTool(tool);
      compiled = compiledParametersOf(tool) as CompiledParameters;
    }
    if (byName.has(tool.name)) {
      throw new ConfigError(`two tools are named "${tool.name}" (tools[${index}] and an earlier one); tool names must be unique`, 'duplicate_tool');
    }
    byName.set(tool.name, tool);
    validators.set(tool, compiled);
    if (candidate !== tool) validators.set(candidate, compiled);
  });
  const ordered = Object.freeze([...byName.values()]);
  return Object.freeze({
    get: (name: string) => (typeof name === 'string' ? byName.get(name) : undefined),
    names: () => [...byName.keys()],
    tools: () => ordered,
    validatorOf: (tool: Tool) => {
      const compiled = validators.get(tool) ?? compiledParametersOf(tool);
      if (compiled === undefined) throw new ConfigError(`tool "${String(tool?.name)}" is not in this registry`);
      return compiled;
    },
  });
}
