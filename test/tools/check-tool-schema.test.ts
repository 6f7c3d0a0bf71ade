import { describe, expect, it } from 'vitest';
import { ToolSchemaError } from '../../src/errors.js';
import { checkToolSchema, nameProblem, toToolName } from '../../src/tools/check-tool-schema.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { JsonSchema } from '../../src/tools/types.js';

const execute = async () => null;
const define = (name: string, parameters: JsonSchema) => defineTool({ name, description: 'd', parameters, execute });
const object = (properties: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'object', properties, ...extra });

describe('tool names (rule 18)', () => {
  it.each(['a', 'lookup_player', 'Lookup-Player2', `a${'b'.repeat(63)}`, 'actions', 'thinker', 'ACTION_PLAN'])('accepts %s', (name) => {
    expect(nameProblem(name)).toBeUndefined();
    expect(define(name, object({})).name).toBe(name);
  });

  it.each([
    ['', 'must match'],
    ['1tool', 'must match'],
    ['_tool', 'must match'],
    ['tool.name', 'must match'],
    ['tööl', 'must match'],
    ['with space', 'must match'],
    [`a${'b'.repeat(64)}`, 'must match'],
    ['action', 'reserved name (its closing tag would end the <ACTION> block)'],
    ['Action', 'reserved'],
    ['OBSERVATION', 'reserved'],
    ['think', 'reserved'],
    ['Thinking', 'reserved'],
    ['constructor', 'Object.prototype'],
    ['__proto__', 'Object.prototype'],
    ['toString', 'Object.prototype'],
    ['hasOwnProperty', 'Object.prototype'],
    ['prototype', 'Object.prototype'],
  ])('rejects %j with tool_schema_rejected', (name, fragment) => {
    expect(nameProblem(name)).toContain(fragment);
    const attempt = () => define(name, object({}));
    expect(attempt).toThrow(ToolSchemaError);
    expect(attempt).toThrow(fragment);
    try {
      attempt();
    } catch (error) {
      expect((error as ToolSchemaError).code).toBe('tool_schema_rejected');
    }
  });

  it.each([
    ['server.tool', 'server__tool'],
    ['github.create_issue', 'github__create_issue'],
    ['a.b.c', 'a__b__c'],
    ['files/read file', 'files_read_file'],
    ['2fa.check', 't2fa__check'],
  ])('maps the MCP name %s to %s', (mcp, mapped) => {
    expect(toToolName(mcp)).toBe(mapped);
    expect(nameProblem(mapped)).toBeUndefined();
  });
});

describe('parameters (rule 18)', () => {
  it.each([
    ['not an object', 'parameters', 'must be a JSON Schema object'],
    ['a string type', { type: 'string' }, 'must have type "object"'],
    ['no type', { properties: {} }, 'must have type "object"'],
    ['a nested reserved property, by name and why', object({ a: object({ Action: { type: 'string' } }) }), 'property "Action" at /properties/a/properties/Action: reserved name (its closing tag would end the <ACTION> block); rename it'],
    ['a nested reserved property', object({ a: object({ thinking: { type: 'string' } }) }), 'property "thinking" at /properties/a/properties/thinking'],
    ['a reserved property in items', object({ a: { type: 'array', items: object({ observation: {} }) } }), '/properties/a/items/properties/observation'],
    ['a prototype property in $defs', { ...object({}), $defs: { x: object({ constructor: { type: 'string' } }) } }, '/$defs/x/properties/constructor'],
    ['a prototype property in definitions', { ...object({}), definitions: { x: object({ valueOf: {} }) } }, 'property "valueOf"'],
    ['a property in anyOf', object({ a: { anyOf: [object({ toString: {} }), { type: 'string' }] } }), '/properties/a/anyOf/0/properties/toString'],
    ['a property in if/then', object({ a: { type: 'object', if: object({ think: {} }), then: object({}) } }), '/properties/a/if/properties/think'],
    ['a property with a bad name', object({ 'first name': { type: 'string' } }), 'property "first name"'],
    ['pattern without maxLength', object({ a: { type: 'string', pattern: '^a+$' } }), '"pattern" and "format" need a "maxLength"'],
    ['format without maxLength', object({ a: { type: 'string', format: 'date' } }), 'need a "maxLength"'],
    ['uniqueItems on objects without maxItems', object({ a: { type: 'array', uniqueItems: true, items: { type: 'object' } } }), '"uniqueItems"'],
    ['insecure $defs', { ...object({}), $defs: { s: { type: 'string', pattern: 'x' } } }, '/$defs/s'],
    ['BFCL dict type', { type: 'object', properties: { a: { type: 'dict' } } }, 'not a valid JSON Schema'],
    ['unknown keyword', object({ a: { type: 'string', optional: true } }), 'strict'],
    ['required not in properties', { ...object({ a: { type: 'string' } }), required: ['b'] }, 'strictRequired'],
    ['properties without type object', object({ a: { properties: { b: {} } } }), 'strictTypes'],
    ['unknown format', object({ a: { type: 'string', format: 'zipcode', maxLength: 9 } }), 'unknown format'],
    ['remote $ref', object({ a: { $ref: 'https://example.com/s.json' } }), 'strict AJV'],
    ['a null default on an integer', object({ a: { type: 'integer', default: null } }), 'property at /properties/a: the default null is not of type integer; fix the default or remove it'],
    ['a nested default of the wrong type', object({ a: { type: 'object', properties: { end: { type: 'string' } }, default: { end: null } } }), 'the default\'s "end": null is not of type string'],
    ['a default item of the wrong type', object({ a: { type: 'array', items: { type: 'integer' }, default: [1, 'x'] } }), 'item 1: "x" is not of type integer'],
    ['a default matching no anyOf form', object({ a: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: 'x' } }), 'matches none of its anyOf forms'],
    ['a default outside the enum', object({ a: { type: 'string', enum: ['x'], default: 'y' } }), 'not one of its enum values'],
    ['a draft-04 $schema', { $schema: 'http://json-schema.org/draft-04/schema#', ...object({}) }, 'draft-07 and 2020-12'],
  ])('rejects %s', (_label, parameters, fragment) => {
    const attempt = () => define('tool_x', parameters as JsonSchema);
    expect(attempt).toThrow(ToolSchemaError);
    expect(attempt).toThrow(fragment);
    expect(attempt).toThrow('tool "tool_x"');
  });

  it('rejects an own "__proto__" property (as JSON.parse makes it)', () => {
    const parameters = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') as JsonSchema;
    expect(() => define('tool_x', parameters)).toThrow('property "__proto__" at /properties/__proto__');
    expect(({} as Record<string, unknown>)['type']).toBeUndefined();
  });

  it('rejects a cyclic schema object without overflowing the stack', () => {
    const a: JsonSchema = { type: 'object', properties: {} };
    (a['properties'] as JsonSchema)['self'] = a;
    expect(() => checkToolSchema('cyclic', a)).toThrow('cyclic');
  });

  it.each([
    ['union types', object({ a: { type: ['string', 'null'] } })],
    ['a draft-07 $schema', { $schema: 'http://json-schema.org/draft-07/schema#', ...object({}) }],
    ['a 2020-12 $schema', { $schema: 'https://json-schema.org/draft/2020-12/schema', ...object({}) }],
    ['a local $ref', { ...object({ a: { $ref: '#/definitions/p' } }), definitions: { p: { type: 'integer' } } }],
    ['pattern with maxLength', object({ a: { type: 'string', pattern: '^a+$', maxLength: 10 } })],
    ['a known format', object({ a: { type: 'string', format: 'date-time', maxLength: 40 } })],
    ['an annotation format', object({ a: { type: 'string', format: 'hostname', maxLength: 255 } })],
    ['patternProperties with propertyNames', { ...object({}), patternProperties: { '^x_': { type: 'string' } }, propertyNames: { maxLength: 20 } }],
    ['anyOf with null (pydantic Optional)', object({ a: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null } })],
    ['a tuple', object({ a: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], minItems: 2, additionalItems: false } })],
  ])('accepts %s', (_label, parameters) => {
    expect(() => define('tool_ok', parameters)).not.toThrow();
  });

  it('compiles a validator per anyOf/oneOf branch', () => {
    const compiled = checkToolSchema('t', object({ a: { anyOf: [{ type: 'integer' }, { type: 'string' }] }, b: { oneOf: [{ type: 'boolean' }, { type: 'null' }] } }));
    expect([...compiled.branches.keys()]).toEqual(['/properties/a/anyOf/0', '/properties/a/anyOf/1', '/properties/b/oneOf/0', '/properties/b/oneOf/1']);
    expect(compiled.branches.get('/properties/a/anyOf/0')?.(5)).toBe(true);
    expect(compiled.branches.get('/properties/a/anyOf/0')?.('5')).toBe(false);
  });
});

describe('schemas too large to validate', () => {
  it('are refused at registration, not on every call', () => {
    const properties: Record<string, unknown> = {};
    for (let index = 0; index < 1_600; index++) properties[`p${index}`] = { type: 'string', maxLength: 10 };
    expect(() => checkToolSchema('huge_tool', { type: 'object', properties })).toThrow(/validator that cannot run.*too large/);
  });
});
