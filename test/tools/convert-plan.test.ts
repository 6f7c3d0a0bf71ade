/** Conversion plans: cached per tool, they must give every call the answers a fresh schema walk would. */
import { describe, expect, it } from 'vitest';
import { normalizeXmlArguments } from '../../src/tools/normalize-arguments.js';
import type { JsonSchema } from '../../src/tools/types.js';
import { validateCalls } from '../../src/tools/validate-calls.js';
import { DEFAULT_LIMITS, rawArgs, toolWith, xmlCall, type ArgSpec } from './helpers.js';

function argsOf(parameters: JsonSchema, specs: readonly ArgSpec[]) {
  const { registry } = toolWith(parameters);
  return validateCalls([xmlCall('t', specs)], { registry, limits: DEFAULT_LIMITS });
}

describe('conversion plans', () => {
  it('gives a repeated call the same result, and a caller cannot change the next one', () => {
    const { registry } = toolWith({ type: 'object', properties: { player_id: { type: 'string' } }, additionalProperties: false });
    const validate = () => validateCalls([xmlCall('t', [['player_idd', '7']])], { registry, limits: DEFAULT_LIMITS });
    const first = validate();
    if (first.ok || first.problem.kind !== 'rejected') throw new Error('expected a rejection');
    first.problem.rejection.issues[0]?.allowed?.push('mutated');
    expect(validate()).toStrictEqual(validate());
    expect(JSON.stringify(validate())).not.toContain('mutated');
  });

  it('keeps branch validators apart for one subschema shared by two properties', () => {
    const shared = { anyOf: [{ type: 'integer', maximum: 5 }, { type: 'string', maxLength: 3 }] };
    const parameters = { type: 'object', properties: { a: shared, b: shared } };
    expect(argsOf(parameters, [['a', '7'], ['b', '3']])).toMatchObject({ ok: true, value: [{ args: { a: '7', b: 3 } }] });
    expect(argsOf(parameters, [['a', '3'], ['b', '7']])).toMatchObject({ ok: true, value: [{ args: { a: 3, b: '7' } }] });
  });

  it('follows a recursive $ref to any depth', () => {
    const parameters = {
      type: 'object',
      properties: { tree: { $ref: '#/$defs/node' } },
      $defs: { node: { type: 'object', properties: { id: { type: 'integer' }, child: { $ref: '#/$defs/node' } } } },
    };
    const tree = '<id>1</id><child><id>2</id><child><id>3</id><child/></child></child>';
    expect(argsOf(parameters, [['tree', tree]])).toMatchObject({ ok: true, value: [{ args: { tree: { id: 1, child: { id: 2, child: { id: 3, child: {} } } } } }] });
  });

  it('takes the first declaration of a name in own properties and allOf entries', () => {
    const parameters = {
      type: 'object',
      properties: { a: { type: 'integer' } },
      allOf: [{ properties: { a: { type: 'integer', minimum: 0 }, b: { type: 'boolean' } } }],
    };
    expect(argsOf(parameters, [['a', '4'], ['b', 'TRUE']])).toMatchObject({ ok: true, value: [{ args: { a: 4, b: true } }] });
  });

  it('does not cache the plan of a schema that can still change', () => {
    const parameters: JsonSchema = { type: 'object', properties: { n: { type: 'integer' } } };
    expect(normalizeXmlArguments(rawArgs([['n', '7']]), { parameters }, DEFAULT_LIMITS)).toStrictEqual({ ok: true, value: { n: 7 } });
    parameters['properties'] = { n: { type: 'string' } };
    expect(normalizeXmlArguments(rawArgs([['n', '7']]), { parameters }, DEFAULT_LIMITS)).toStrictEqual({ ok: true, value: { n: '7' } });
  });
});

describe('plain text takes the short way through decoding', () => {
  it.each<[string, string]>([
    ['  striker \r\n', 'striker'],
    ['\u00a0x\u00a0', '\u00a0x\u00a0'],
    ['\v7\f', '\v7\f'],
    ['a [b] c', 'a [b] c'],
    ['x &amp; y', 'x & y'],
  ])('reads %j as %j', (raw, value) => {
    expect(argsOf({ type: 'object', properties: { v: { type: 'string' } } }, [['v', raw]])).toMatchObject({ ok: true, value: [{ args: { v: value } }] });
  });
});
