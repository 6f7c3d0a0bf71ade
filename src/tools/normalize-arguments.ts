/**
 * Turns a raw call's arguments into a plain JSON object for AJV: XML arguments by the tool's schema
 * (docs/protocol.md rules 10–15), native `arguments` text by the checking JSON parser (rule 17).
 */
import { failure, success, type Outcome } from '../outcome.js';
import { parseCheckedJson } from '../protocol/json-checked.js';
import type { ProtocolLimits, RawArgument } from '../protocol/types.js';
import type { CompiledParameters } from './check-tool-schema.js';
import { rootPlan } from './convert-plan.js';
import { convertChildren, type ArgumentProblem } from './convert-value.js';
import type { JsonSchema } from './types.js';

export type { ArgumentProblem } from './convert-value.js';

/** The tool facts normalization needs. */
export type NormalizeTarget = {
  parameters: JsonSchema;
  verbatimParams?: readonly string[] | undefined;
  compiled?: CompiledParameters | undefined;
};

/** Depth of a call's argument elements (ACTION = 0, call = 1). */
const ARGUMENT_DEPTH = 2;

/**
 * Converts an XML call's arguments into an object typed by the tool's parameters.
 *
 * Text that does not fit its type stays a string, so AJV reports it next; problems that stop here
 * are unknown names in a closed schema, repeated non-array arguments, forbidden names, JSON
 * literals with duplicate keys, depth, and malformed nested XML.
 *
 * @example
 * normalizeXmlArguments([{ name: 'id', raw: '7', selfClosing: false, offset: 0 }], { parameters }, DEFAULT_LIMITS);
 * // { ok: true, value: { id: 7 } } when `id` is an integer parameter
 */
export function normalizeXmlArguments(
  args: readonly RawArgument[],
  target: NormalizeTarget,
  limits: ProtocolLimits,
): Outcome<Record<string, unknown>, ArgumentProblem> {
  const context = { limits, branches: target.compiled?.branches };
  const converted = convertChildren(context, args, rootPlan(target.parameters), ARGUMENT_DEPTH, '', target.verbatimParams);
  return converted as Outcome<Record<string, unknown>, ArgumentProblem>;
}

/**
 * Parses a native call's `arguments` text: empty or whitespace is `{}`; otherwise it must be one
 * JSON object, checked for duplicate and forbidden keys, depth and characters. Values are not
 * converted: native calls already carry JSON types, and AJV judges them as they are.
 */
export function normalizeNativeArguments(argumentsText: string, limits: ProtocolLimits): Outcome<Record<string, unknown>, ArgumentProblem> {
  if (typeof argumentsText !== 'string') {
    return invalidJson(`The arguments must be JSON text of one object, got ${argumentsText === null ? 'null' : typeof argumentsText}.`);
  }
  // Many models send "" for a call without arguments (vercel/ai parse-tool-call.ts notes the same).
  if (/^[ \t\r\n]*$/.test(argumentsText)) return success({});
  if (argumentsText.length > limits.maxActionChars) {
    return failure({
      kind: 'malformed',
      problem: {
        category: 'limit_exceeded',
        message: `The arguments are ${argumentsText.length} characters long; the limit is ${limits.maxActionChars}.`,
      },
    });
  }
  // Native arguments sit where XML argument elements would: the object opens at call depth 1.
  const parsed = parseCheckedJson(argumentsText, { maxDepth: limits.maxDepth, baseDepth: 1 });
  if (!parsed.ok) {
    const { category, message, path } = parsed.problem;
    switch (category) {
      case 'invalid_json':
        return invalidJson(`The arguments are not valid JSON: ${message}`);
      case 'duplicate_param':
      case 'forbidden_name':
        return failure({ kind: 'invalid', issue: { category, message, ...(path !== '' && path !== '/' && { path }) } });
      default:
        return failure({ kind: 'malformed', problem: { category, message } });
    }
  }
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const what = Array.isArray(value) ? 'an array' : typeof value === 'string' ? 'a string (double-encoded JSON?)' : JSON.stringify(value);
    return invalidJson(`The arguments must be one JSON object like {"name": "value"}, got ${what}.`);
  }
  return success(value as Record<string, unknown>);
}

function invalidJson(message: string): Outcome<never, ArgumentProblem> {
  return failure({ kind: 'invalid', issue: { category: 'invalid_arguments_json', message } });
}
