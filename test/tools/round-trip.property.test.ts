/** Random registries and values survive render → parse → validate; mutated input never throws. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseOutput } from '../../src/protocol/parse-output.js';
import { renderAction } from '../../src/protocol/render-call.js';
import { DEFAULT_LIMITS, type ProtocolCategory } from '../../src/protocol/types.js';
import { nameProblem } from '../../src/tools/check-tool-schema.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createRegistry } from '../../src/tools/registry.js';
import type { JsonSchema, Tool } from '../../src/tools/types.js';
import { validateCalls } from '../../src/tools/validate-calls.js';

const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,10}$/).filter((candidate) => nameProblem(candidate) === undefined);

// XML-legal text: printable ASCII, the characters XML cares about, and some Unicode.
const specials = ['<', '>', '&', ']]>', '<![CDATA[', '&amp;', '&#65;', ' ', '\n', '\r\n', '\r', '\t', 'é', '😀', '</ACTION>', '<item>', '"', "'", '[', '{'];
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: fc.constantFrom(...specials), maxLength: 6 }));
const number = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Object.is(value, -0));
const scalarOption = fc.oneof(text, fc.integer({ min: -1000, max: 1000 }), fc.boolean(), fc.constant(null));

type Node = { schema: JsonSchema; value: fc.Arbitrary<unknown> };

const formOf = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function leaf(): fc.Arbitrary<Node> {
  return fc.oneof(
    fc.constant({ schema: { type: 'string' }, value: text }),
    fc.constant({ schema: { type: 'integer' }, value: fc.maxSafeInteger().filter((value) => !Object.is(value, -0)) }),
    fc.constant({ schema: { type: 'number' }, value: number }),
    fc.constant({ schema: { type: 'boolean' }, value: fc.boolean() }),
    fc.constant({ schema: { type: 'null' }, value: fc.constant(null) }),
    fc.uniqueArray(scalarOption, { minLength: 1, maxLength: 4, selector: formOf }).map((options) => ({ schema: { enum: options }, value: fc.constantFrom(...options) })),
  );
}

function nodeArbitrary(depth: number): fc.Arbitrary<Node> {
  if (depth <= 0) return leaf();
  const child = nodeArbitrary(depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf() },
    {
      weight: 1,
      arbitrary: child.map((item) => ({
        schema: { type: 'array', items: item.schema },
        // A lone string starting with "[" would read as a JSON array literal (rule 13).
        value: fc.array(item.value, { maxLength: 3 }).filter((items) => !(items.length === 1 && typeof items[0] === 'string' && items[0].startsWith('['))),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.uniqueArray(fc.tuple(name, child), { minLength: 0, maxLength: 3, selector: ([key]) => key }).map((entries) => ({
        schema: { type: 'object', properties: Object.fromEntries(entries.map(([key, node]) => [key, node.schema])), additionalProperties: false },
        value: fc.record(Object.fromEntries(entries.map(([key, node]) => [key, node.value])), { requiredKeys: [] }),
      })),
    },
  );
}

const toolArbitrary = fc
  .tuple(name, fc.uniqueArray(fc.tuple(name, nodeArbitrary(2), fc.boolean()), { maxLength: 4, selector: ([key]) => key }))
  .map(([toolName, params]) => {
    const verbatimParams = params.filter(([, node, verbatim]) => verbatim && node.schema['type'] === 'string').map(([key]) => key);
    const tool = defineTool({
      name: toolName,
      description: 'generated',
      parameters: { type: 'object', properties: Object.fromEntries(params.map(([key, node]) => [key, node.schema])), additionalProperties: false },
      verbatimParams,
      execute: async () => null,
    });
    const args = fc.record(Object.fromEntries(params.map(([key, node]) => [key, node.value])), { requiredKeys: [] });
    return { tool, args };
  });

const scenario = fc
  .uniqueArray(toolArbitrary, { minLength: 1, maxLength: 3, selector: ({ tool }) => tool.name })
  .chain((tools) =>
    fc.tuple(fc.constant(tools.map(({ tool }) => tool)), fc.array(fc.nat({ max: tools.length - 1 }).chain((index) => fc.tuple(fc.constant(index), tools[index]!.args)), { minLength: 1, maxLength: 3 })),
  );

function render(tools: Tool[], calls: Array<[number, Record<string, unknown>]>): string {
  const rendered = calls.map(([index, args]) => {
    const tool = tools[index] as Tool;
    return { name: tool.name, args, ...(tool.verbatimParams !== undefined && { verbatimParams: tool.verbatimParams }) };
  });
  return `Let me do that.\n${renderAction(rendered)}`;
}

const CATEGORIES = new Set<ProtocolCategory>([
  'unclosed_action', 'multiple_action_blocks', 'action_in_code_fence', 'empty_action', 'malformed_xml', 'malformed_call',
  'attributes_not_supported', 'doctype_forbidden', 'invalid_character', 'limit_exceeded', 'duplicate_call_id',
  'unknown_tool', 'not_permitted', 'validation_error', 'duplicate_param', 'invalid_arguments_json', 'forbidden_name',
]);

const prototypeNames = () => Object.getOwnPropertyNames(Object.prototype).sort().join();

describe('round trip', () => {
  it('render → parseOutput → validateCalls gives back the generated values', () => {
    fc.assert(
      fc.property(scenario, ([tools, calls]) => {
        const parsed = parseOutput(render(tools, calls));
        expect(parsed.problem).toBeUndefined();
        const outcome = validateCalls(parsed.calls, { registry: createRegistry(tools), limits: DEFAULT_LIMITS });
        expect(outcome.ok ? outcome.value.map((call) => [call.name, call.args]) : outcome.problem).toEqual(
          calls.map(([index, args]) => [tools[index]!.name, args]),
        );
      }),
      { numRuns: 200 },
    );
  });
});

describe('hostile input', () => {
  const mutation = fc.tuple(fc.nat(), fc.nat({ max: 8 }), fc.constantFrom('', '<', '>', '/', '&', '"', '=', '<![CDATA[', ']]>', '<!--', '-->', '<!DOCTYPE x>', '__proto__', 'constructor', '<__proto__>', '\u0000', '\uD800', '[', '{"a":1,"a":2}', 'x'.repeat(50)));

  it('mutated calls never throw, never pollute, and fail only with protocol categories', () => {
    const before = prototypeNames();
    fc.assert(
      fc.property(scenario, fc.array(mutation, { minLength: 1, maxLength: 6 }), ([tools, calls], edits) => {
        let input = render(tools, calls);
        for (const [at, remove, insert] of edits) {
          const position = at % (input.length + 1);
          input = input.slice(0, position) + insert + input.slice(position + remove);
        }
        const parsed = parseOutput(input);
        if (parsed.problem !== undefined) {
          expect(CATEGORIES.has(parsed.problem.category)).toBe(true);
          return;
        }
        const outcome = validateCalls(parsed.calls, { registry: createRegistry(tools), limits: DEFAULT_LIMITS });
        if (!outcome.ok) {
          const category = outcome.problem.kind === 'malformed' ? outcome.problem.problem.category : outcome.problem.rejection.category;
          expect(CATEGORIES.has(category as ProtocolCategory)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
    expect(prototypeNames()).toBe(before);
    expect(({} as Record<string, unknown>)['a']).toBeUndefined();
  });

  it('random native arguments never throw', () => {
    const registry = createRegistry([defineTool({ name: 'any_tool', description: 'x', parameters: { type: 'object' }, execute: async () => null })]);
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string(), fc.jsonValue().map((value) => JSON.stringify({ a: value, __proto__x: 1 }))), (argumentsText) => {
        const outcome = validateCalls([{ format: 'native', callId: 'c', name: 'any_tool', argumentsText }], { registry, limits: DEFAULT_LIMITS });
        if (!outcome.ok) {
          const category = outcome.problem.kind === 'malformed' ? outcome.problem.problem.category : outcome.problem.rejection.category;
          expect(CATEGORIES.has(category as ProtocolCategory)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
