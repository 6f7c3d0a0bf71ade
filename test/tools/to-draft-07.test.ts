import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolSchemaError, defineTool, type JsonSchema } from '../../src/index.js';
import { createRegistry, validateCalls } from '../../src/tools/index.js';
import { DEFAULT_LIMITS } from '../../src/protocol/index.js';
import { toDraft07 } from '../../src/tools/to-draft-07.js';

const LATER = 'https://json-schema.org/draft/2020-12/schema';

describe('toDraft07', () => {
  it.each<[string, JsonSchema, JsonSchema]>([
    ['prefixItems with items: false', { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }], items: false }, { type: 'array', items: [{ type: 'number' }, { type: 'string' }], additionalItems: false }],
    ['prefixItems with a schema for the rest', { type: 'array', prefixItems: [{ type: 'number' }], items: { type: 'boolean' } }, { type: 'array', items: [{ type: 'number' }], additionalItems: { type: 'boolean' } }],
    ['dependentRequired and dependentSchemas', { type: 'object', dependentRequired: { a: ['b'] }, dependentSchemas: { c: { required: ['d'] } } }, { type: 'object', dependencies: { a: ['b'], c: { required: ['d'] } } }],
    ['unevaluatedProperties on a plain object', { type: 'object', properties: { a: { type: 'string' } }, unevaluatedProperties: false }, { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }],
    ['unevaluatedProperties: true', { type: 'object', unevaluatedProperties: true }, { type: 'object' }],
    ['a 2020-12 $schema', { $schema: LATER, type: 'object' }, { type: 'object' }],
    ['a draft-07 $schema', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }, { type: 'object' }],
    ['forms nested in $defs, anyOf and properties', { type: 'object', $defs: { pair: { prefixItems: [{ type: 'number' }] } }, properties: { p: { anyOf: [{ $ref: '#/$defs/pair' }, { type: 'null' }] } } }, { type: 'object', $defs: { pair: { items: [{ type: 'number' }] } }, properties: { p: { anyOf: [{ $ref: '#/$defs/pair' }, { type: 'null' }] } } }],
    ['a draft-07 tuple, unchanged', { type: 'array', items: [{ type: 'number' }], additionalItems: false }, { type: 'array', items: [{ type: 'number' }], additionalItems: false }],
  ])('rewrites %s', (_label, input, expected) => {
    const before = structuredClone(input);
    expect(toDraft07(input, 't')).toEqual(expected);
    expect(input).toEqual(before);
  });

  it.each<[string, JsonSchema, string]>([
    ['$dynamicRef', { type: 'object', properties: { a: { $dynamicRef: '#node' } } }, 'parameters at /properties/a: "$dynamicRef" (JSON Schema 2019-09/2020-12) has no draft-07 equivalent; use a plain "$ref"'],
    ['minContains', { type: 'array', contains: { type: 'string' }, minContains: 2 }, '"minContains"'],
    ['an array items in a declared 2020-12 schema', { $schema: LATER, type: 'object', properties: { a: { type: 'array', items: [{ type: 'string' }] } } }, 'write the tuple as "prefixItems"'],
    ['prefixItems beside additionalItems', { type: 'array', prefixItems: [{ type: 'string' }], additionalItems: false }, 'mixes drafts'],
    ['unevaluatedProperties beside allOf', { type: 'object', allOf: [{ properties: { a: {} } }], unevaluatedProperties: false }, '"unevaluatedProperties" beside "allOf" has no draft-07 equivalent'],
  ])('refuses %s with a ToolSchemaError', (_label, input, message) => {
    expect(() => toDraft07(input, 't')).toThrow(ToolSchemaError);
    expect(() => toDraft07(input, 't')).toThrow(message);
  });

  it('keeps an own "__proto__" key for the registration checks to refuse', () => {
    const parameters = JSON.parse(`{"$schema":"${LATER}","type":"object","properties":{"__proto__":{"type":"string"}}}`) as JsonSchema;
    expect(() => defineTool({ name: 't', description: 'd', parameters, execute: () => 1 })).toThrow('property "__proto__" at /properties/__proto__');
  });
});

describe('JSON Schema 2020-12 parameters', () => {
  // What z.toJSONSchema() writes, as plain JSON (the form a schema takes on disk or over MCP).
  const position = z.object({ at: z.tuple([z.number(), z.number()]), who: z.string().max(12).meta({ id: 'Name' }) });
  const written = JSON.parse(JSON.stringify(z.toJSONSchema(position))) as JsonSchema;

  it('is what z.toJSONSchema() writes: $schema 2020-12, prefixItems, $defs', () => {
    expect(written).toMatchObject({ $schema: LATER, $defs: { Name: { type: 'string' } } });
    expect(JSON.stringify(written)).toContain('prefixItems');
  });

  it('registers, and validates what the model writes', () => {
    const move = defineTool({ name: 'move', description: 'Move someone.', parameters: written, execute: () => 1 });
    expect(move.parameters['properties']).toMatchObject({ at: { items: [{ type: 'number' }, { type: 'number' }], additionalItems: false }, who: { $ref: '#/$defs/Name' } });
    const registry = createRegistry([move]);
    const check = (argumentsText: string) => validateCalls([{ format: 'native', callId: 'c', name: 'move', argumentsText }], { registry, limits: DEFAULT_LIMITS });
    expect(check('{"at":[1,2],"who":"pip"}').ok).toBe(true);
    const tooLong = check('{"at":[1,2,3],"who":"pip"}');
    expect(tooLong.ok || tooLong.problem.kind !== 'rejected' ? undefined : tooLong.problem.rejection.issues[0]).toMatchObject({ keyword: 'maxItems', property: 'at' });
    const badName = check('{"at":[1,2],"who":"a name far too long"}');
    expect(badName.ok || badName.problem.kind !== 'rejected' ? undefined : badName.problem.rejection.issues[0]).toMatchObject({ keyword: 'maxLength', path: '/who' });
  });

  it('still passes the secure meta-schema, inside $defs too', () => {
    const parameters = { $schema: LATER, type: 'object', properties: { a: { $ref: '#/$defs/code' } }, $defs: { code: { type: 'string', pattern: '^[a-z]+$' } } };
    expect(() => defineTool({ name: 't', description: 'd', parameters, execute: () => 1 })).toThrow('parameters at /$defs/code: fails the secure meta-schema');
  });
});
