/**
 * Plausible example arguments built from a tool's schema, for the manifest's few-shot example.
 * The example is checked against the tool's own validator, so the model is never shown a call
 * troupe would reject.
 */
import { compiledParametersOf } from '../tools/define-tool.js';
import { checkToolSchema } from '../tools/check-tool-schema.js';
import { isObject, itemNode, own, propertyNode, resolveNode, schemaTypes, type SchemaNode } from '../tools/schema-walk.js';
import type { JsonSchema, Tool } from '../tools/types.js';
import { valueProblem } from '../tools/value-problem.js';

/** A call as the manifest shows it. */
export type ExampleCall = { name: string; args: Record<string, unknown> };

/** Example values nest at most this deep (recursive schemas stop here). */
const MAX_EXAMPLE_DEPTH = 6;

// Plausible strings by parameter name; the first matching hint wins.
const STRING_HINTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/e-?mail/i, 'ana@example.com'],
  [/url|uri|link|endpoint/i, 'https://example.com'],
  [/path|file|dir/i, 'notes/today.txt'],
  [/date/i, '2025-06-01'],
  [/time/i, '12:00'],
  [/city|location|place|town/i, 'Paris'],
  [/country/i, 'France'],
  [/name|user|author|player/i, 'Ana'],
  [/query|search|question|prompt/i, 'weather in Paris'],
  [/lang/i, 'en'],
  [/id$|_id|Id$/, 'abc123'],
  [/code|content|text|body|message|description/i, 'Hello, world.'],
  [/color|colour/i, 'blue'],
  [/unit/i, 'metric'],
];

const FORMAT_EXAMPLES: Readonly<Record<string, string>> = {
  date: '2025-06-01',
  time: '12:00:00Z',
  'date-time': '2025-06-01T12:00:00Z',
  email: 'ana@example.com',
  'idn-email': 'ana@example.com',
  uri: 'https://example.com',
  'uri-reference': 'https://example.com',
  iri: 'https://example.com',
  'iri-reference': 'https://example.com',
  uuid: '123e4567-e89b-12d3-a456-426614174000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
};

// Candidates tried against a `pattern` when the name-based guess does not match it.
const PATTERN_CANDIDATES = ['abc', 'a', 'A', 'Abc', 'abc123', '1', '42', 'a1', 'A1', 'AB', 'ABC', 'ab-cd', 'ab_cd', '2025-06-01', '12:00', 'a@b.co', 'https://example.com', '+15555550123'];

/**
 * An example call of `tool` with its required parameters (or its first parameter when none is
 * required), respecting enums, defaults, bounds and simple patterns; `include` adds one more
 * parameter. `undefined` when the schema makes a valid example infeasible to guess (an unusual
 * `pattern`, say).
 *
 * @example
 * exampleCall(lookupPlayer); // { name: 'lookup_player', args: { id: 'abc123' } }
 */
export function exampleCall(tool: Tool, include?: string): ExampleCall | undefined {
  const root = tool.parameters;
  const args = exampleObject(root, { schema: root, pointer: '' }, 0, true, include);
  if (args === undefined) return undefined;
  return validExample(tool, args) ? { name: tool.name, args } : undefined;
}

/** Whether `args` is a valid call of `tool`, checked with the tool's own validator. */
export function validExample(tool: Tool, args: Record<string, unknown>): boolean {
  const validate = (compiledParametersOf(tool) ?? checkToolSchema(tool.name, tool.parameters)).validate;
  // Validate a copy: AJV's useDefaults would add defaulted parameters to the example itself.
  return validate(structuredClone(args));
}

function exampleObject(root: JsonSchema, node: SchemaNode, depth: number, top: boolean, include?: string): Record<string, unknown> | undefined {
  const schema = node.schema;
  const required = own(schema, 'required');
  const properties = own(schema, 'properties');
  let names = Array.isArray(required) ? required.filter((name): name is string => typeof name === 'string') : [];
  if (include !== undefined && !names.includes(include)) names = [...names, include];
  // With nothing required, show one argument at the top so the example teaches the format.
  else if (names.length === 0 && top && isObject(properties)) names = Object.keys(properties).slice(0, 1);
  const result: Record<string, unknown> = {};
  for (const name of names) {
    const value = exampleValue(root, propertyNode(root, node, name).child, name, depth + 1);
    if (value === undefined) {
      if (Array.isArray(required) && required.includes(name)) return undefined;
      continue;
    }
    Object.defineProperty(result, name, { value: value.value, enumerable: true, writable: true, configurable: true });
  }
  return result;
}

function exampleValue(root: JsonSchema, unresolved: SchemaNode, name: string, depth: number): { value: unknown } | undefined {
  if (depth > MAX_EXAMPLE_DEPTH) return undefined;
  const node = resolveNode(root, unresolved);
  const schema = node.schema;
  if (schema === false) return undefined;
  if (!isObject(schema)) return { value: hintFor(name) };
  if (Object.hasOwn(schema, 'const')) return { value: structuredClone(own(schema, 'const')) };
  // An enum value outside the declared type could never validate (some real schemas have them).
  const options = own(schema, 'enum');
  if (Array.isArray(options)) {
    const usable = options.find((option) => valueProblem(root, { ...schema, enum: [option] }, option) === undefined);
    return usable === undefined ? undefined : { value: structuredClone(usable) };
  }
  if (Object.hasOwn(schema, 'default')) return { value: structuredClone(own(schema, 'default')) };
  if (!Object.hasOwn(schema, 'type')) {
    for (const key of ['anyOf', 'oneOf']) {
      const branches = own(schema, key);
      if (!Array.isArray(branches)) continue;
      for (let index = 0; index < branches.length; index += 1) {
        const value = exampleValue(root, { schema: branches[index] as JsonSchema, pointer: `${node.pointer}/${key}/${index}` }, name, depth);
        if (value !== undefined && value.value !== null) return value;
      }
    }
  }
  const types = schemaTypes(root, schema);
  const type = types.find((candidate) => candidate !== 'null') ?? types[0] ?? 'string';
  switch (type) {
    case 'string':
      return exampleString(schema, name);
    case 'integer':
    case 'number':
      return exampleNumber(schema, type);
    case 'boolean':
      return { value: true };
    case 'null':
      return { value: null };
    case 'array':
      return exampleArray(root, node, name, depth);
    case 'object': {
      const value = exampleObject(root, node, depth, false);
      return value === undefined ? undefined : { value };
    }
    default:
      return undefined;
  }
}

function exampleString(schema: JsonSchema, name: string): { value: string } | undefined {
  const format = own(schema, 'format');
  const pattern = own(schema, 'pattern');
  const minLength = numberOr(own(schema, 'minLength'), 0);
  const maxLength = numberOr(own(schema, 'maxLength'), Number.POSITIVE_INFINITY);
  const candidates = [
    ...(typeof format === 'string' && FORMAT_EXAMPLES[format] !== undefined ? [FORMAT_EXAMPLES[format]] : []),
    hintFor(name),
    ...(typeof pattern === 'string' ? PATTERN_CANDIDATES : []),
  ];
  let regex: RegExp | undefined;
  if (typeof pattern === 'string') {
    try {
      regex = new RegExp(pattern, 'u');
    } catch {
      return undefined;
    }
  }
  for (const candidate of candidates) {
    let text = candidate;
    if (regex === undefined) {
      if (text.length < minLength) text = text.padEnd(minLength, 'x');
      if (text.length > maxLength) text = text.slice(0, Math.max(maxLength, 0));
    }
    if (text.length >= minLength && text.length <= maxLength && (regex === undefined || regex.test(text))) return { value: text };
  }
  return undefined;
}

function exampleNumber(schema: JsonSchema, type: 'integer' | 'number'): { value: number } | undefined {
  const step = numberOr(own(schema, 'multipleOf'), type === 'integer' ? 1 : 0);
  let low = numberOr(own(schema, 'minimum'), Number.NEGATIVE_INFINITY);
  let high = numberOr(own(schema, 'maximum'), Number.POSITIVE_INFINITY);
  const exclusiveLow = own(schema, 'exclusiveMinimum');
  const exclusiveHigh = own(schema, 'exclusiveMaximum');
  const nudge = type === 'integer' ? 1 : 0.5;
  if (typeof exclusiveLow === 'number') low = Math.max(low, exclusiveLow + nudge);
  if (typeof exclusiveHigh === 'number') high = Math.min(high, exclusiveHigh - nudge);
  let value = type === 'integer' ? 3 : 2.5;
  if (value < low) value = low;
  if (value > high) value = high;
  if (type === 'integer') value = Math.ceil(value);
  if (step > 0) value = Math.ceil(value / step) * step;
  return value >= low && value <= high && Number.isFinite(value) ? { value } : undefined;
}

function exampleArray(root: JsonSchema, node: SchemaNode, name: string, depth: number): { value: unknown[] } | undefined {
  const minItems = numberOr(own(node.schema, 'minItems'), 0);
  const maxItems = numberOr(own(node.schema, 'maxItems'), Number.POSITIVE_INFINITY);
  const count = Math.min(Math.max(minItems, 1), maxItems);
  const items: unknown[] = [];
  for (let index = 0; index < count; index += 1) {
    const item = exampleValue(root, itemNode(node, index), singular(name), depth + 1);
    if (item === undefined) return undefined;
    let value = item.value;
    // uniqueItems: vary scalars so the items differ.
    if (own(node.schema, 'uniqueItems') === true && index > 0) {
      if (typeof value === 'string') value = `${value}${index + 1}`;
      else if (typeof value === 'number') value += index;
    }
    items.push(value);
  }
  return { value: items };
}

function hintFor(name: string): string {
  for (const [pattern, value] of STRING_HINTS) if (pattern.test(name)) return value;
  return 'example';
}

function singular(name: string): string {
  return name.endsWith('s') ? name.slice(0, -1) : name;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
