/** Builders for raw calls, so the validate stage can be tested without the parser. */
import { DEFAULT_LIMITS, type ProtocolLimits, type RawArgument, type RawCall } from '../../src/protocol/types.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createRegistry, type Registry } from '../../src/tools/registry.js';
import type { JsonSchema, Tool } from '../../src/tools/types.js';
import { validateCalls } from '../../src/tools/validate-calls.js';

/** An argument element: `[name, inner text]`, or `[name, null]` for a self-closing one. */
export type ArgSpec = readonly [string, string | null];

export function rawArgs(specs: readonly ArgSpec[]): RawArgument[] {
  return specs.map(([name, raw], index) => ({ name, raw: raw ?? '', selfClosing: raw === null, offset: index * 10, innerOffset: index * 10 + name.length + 2 }));
}

export function xmlCall(name: string, specs: readonly ArgSpec[] = [], callId = `call_${name}`): RawCall {
  return { format: 'xml', callId, name, args: rawArgs(specs), offset: 0 };
}

export function nativeCall(name: string, argumentsText: string, callId = `native_${name}`): RawCall {
  return { format: 'native', callId, name, argumentsText };
}

/** A registry holding one tool `t` with these parameters. */
export function toolWith(parameters: JsonSchema, extra: { verbatimParams?: string[] } = {}): { tool: Tool; registry: Registry } {
  const tool = defineTool({ name: 't', description: 'test tool', parameters, execute: async () => null, ...extra });
  return { tool, registry: createRegistry([tool]) };
}

/** Validates one XML call of `t` with a single argument `v` typed by `schema`. */
export function valueOf(schema: JsonSchema, specs: readonly ArgSpec[], limits: ProtocolLimits = DEFAULT_LIMITS) {
  const { registry } = toolWith({ type: 'object', properties: { v: schema } });
  return validateCalls([xmlCall('t', specs)], { registry, limits });
}

export { DEFAULT_LIMITS };
