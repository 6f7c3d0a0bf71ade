/** XML argument text converted by the tool's schema, then AJV (docs/protocol.md, rules 10–15: strings, numbers, booleans and null, arrays, objects, JSON literals). */
import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../src/tools/types.js';
import { validateCalls } from '../../src/tools/validate-calls.js';
import { DEFAULT_LIMITS, toolWith, valueOf, xmlCall, type ArgSpec } from '../tools/helpers.js';

type Expected = { value: unknown } | { category: string; keyword?: string } | { malformed: string };

function check(schema: JsonSchema, specs: readonly ArgSpec[], expected: Expected, limits = DEFAULT_LIMITS): void {
  const outcome = valueOf(schema, specs, limits);
  if ('value' in expected) {
    expect(outcome.ok ? outcome.value[0]?.args['v'] : outcome.problem).toStrictEqual(expected.value);
  } else if ('malformed' in expected) {
    expect(outcome.ok || outcome.problem.kind === 'rejected' ? outcome : outcome.problem.problem.category).toBe(expected.malformed);
  } else {
    expect(outcome.ok || outcome.problem.kind === 'malformed' ? outcome : outcome.problem.rejection.category).toBe(expected.category);
    if (!outcome.ok && outcome.problem.kind === 'rejected') {
      expect(outcome.problem.rejection.code).toBe('invalid_arguments');
      if (expected.keyword !== undefined) expect(outcome.problem.rejection.issues[0]?.keyword).toBe(expected.keyword);
    }
  }
}

const v = (raw: string | null): ArgSpec[] => [['v', raw]];
const typeError = { category: 'validation_error', keyword: 'type' } as const;

describe('rule 10: strings', () => {
  const string = { type: 'string' };
  it.each<[string, string | null, Expected]>([
    ['trims ASCII whitespace', '  hello \n', { value: 'hello' }],
    ['decodes the five entities and numeric references', '&lt;b&gt; &amp; &quot;&apos; &#65;&#x42;', { value: '<b> & "\' AB' }],
    ['keeps other references and a bare & literal', '&nbsp; & &foo; &#0; &#xD800;', { value: '&nbsp; & &foo; &#0; &#xD800;' }],
    ['unwraps CDATA verbatim', '<![CDATA[  a < b && c ]]>', { value: '  a < b && c ' }],
    ['keeps markup and comments as text', '<b>bold</b> <!-- c --> text', { value: '<b>bold</b> <!-- c --> text' }],
    ['reads a self-closing element as ""', null, { value: '' }],
    ['reads whitespace as ""', ' \t\n ', { value: '' }],
    ['keeps 007 a string', '007', { value: '007' }],
    ['rejects a stray ]]>', 'a ]]> b', { malformed: 'malformed_xml' }],
  ])('%s', (_label, raw, expected) => check(string, v(raw), expected));

  it('keeps verbatimParams verbatim except one leading and trailing newline', () => {
    const { registry } = toolWith({ type: 'object', properties: { code: { type: 'string' }, other: { type: 'string' } } }, { verbatimParams: ['code'] });
    const outcome = validateCalls([xmlCall('t', [['code', '\n  if (a < b) {}\n\n'], ['other', '\n  x  \n']])], { registry, limits: DEFAULT_LIMITS });
    expect(outcome.ok && outcome.value[0]?.args).toEqual({ code: '  if (a < b) {}\n', other: 'x' });
  });
});

describe('rule 11: integers and numbers', () => {
  it.each<[string, Expected]>([
    ['42', { value: 42 }],
    [' -7 ', { value: -7 }],
    ['0', { value: 0 }],
    ['1e3', { value: 1000 }],
    ['2.0', { value: 2 }],
    ['9007199254740991', { value: 9007199254740991 }],
    ['9007199254740993', typeError],
    ['-9007199254740993', typeError],
    ['1.5', typeError],
    ['007', typeError],
    ['0x1F', typeError],
    ['1_000', typeError],
    ['+5', typeError],
    ['Infinity', typeError],
    ['NaN', typeError],
    ['', typeError],
    ['   ', typeError],
    ['5 apples', typeError],
    ['<![CDATA[12]]>', { value: 12 }],
  ])('integer %j', (raw, expected) => check({ type: 'integer' }, v(raw), expected));

  it.each<[string, Expected]>([
    ['3.25', { value: 3.25 }],
    ['-0.5e-3', { value: -0.0005 }],
    ['1E+2', { value: 100 }],
    ['12345678901234567890', { value: 12345678901234567000 }],
    ['.5', typeError],
    ['1.', typeError],
    ['1e400', typeError],
    ['-', typeError],
    ['１２', typeError],
  ])('number %j', (raw, expected) => check({ type: 'number' }, v(raw), expected));

  it('reports the minimum keyword after conversion', () => check({ type: 'integer', minimum: 10 }, v('3'), { category: 'validation_error', keyword: 'minimum' }));
});

describe('rule 12: booleans and null', () => {
  it.each<[string | null, Expected]>([
    ['true', { value: true }],
    ['False', { value: false }],
    ['TRUE', { value: true }],
    [' false ', { value: false }],
    ['1', typeError],
    ['yes', typeError],
    ['on', typeError],
    ['', typeError],
    [null, typeError],
  ])('boolean %j', (raw, expected) => check({ type: 'boolean' }, v(raw), expected));

  it.each<[string | null, Expected]>([
    ['', { value: null }],
    [null, { value: null }],
    ['null', { value: null }],
    [' null ', { value: null }],
    ['None', typeError],
    ['NULL', typeError],
  ])('null %j', (raw, expected) => check({ type: 'null' }, v(raw), expected));
});

describe('rule 13: arrays', () => {
  const ints = { type: 'array', items: { type: 'integer' } };
  const strings = { type: 'array', items: { type: 'string' } };
  it.each<[string, JsonSchema, ArgSpec[], Expected]>([
    ['repeated tags give one item each', ints, [['v', '1'], ['v', ' 2 ']], { value: [1, 2] }],
    ['child elements give one item each', ints, v('<item>1</item><item>2</item>'), { value: [1, 2] }],
    ['a single child is a one-item array', ints, v('<item>5</item>'), { value: [5] }],
    ['children may have any names', strings, v('<a>x</a> <!-- c --> <b>y</b>'), { value: ['x', 'y'] }],
    ['a JSON array literal is parsed', ints, v(' [1, 2, 3] '), { value: [1, 2, 3] }],
    ['a JSON array literal in CDATA is parsed', ints, v('<![CDATA[[4]]]>'), { value: [4] }],
    ['a bare scalar is a one-item array', ints, v('7'), { value: [7] }],
    ['commas are not split', strings, v('a, b'), { value: ['a, b'] }],
    ['an empty element is []', ints, v(''), { value: [] }],
    ['a self-closing element is []', ints, v(null), { value: [] }],
    ['items are typed by items', { type: 'array', items: { type: 'boolean' } }, v('<i>TRUE</i><i>false</i>'), { value: [true, false] }],
    ['tuple items are typed by position', { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], minItems: 2, additionalItems: false }, v('<i>a</i><i>2</i>'), { value: ['a', 2] }],
    ['a bad item is a type error', ints, v('<item>1</item><item>two</item>'), typeError],
    ['invalid JSON is a type error (rule 15)', ints, v('[1, 2'), typeError],
    ['JSON items are not converted', ints, v('["1"]'), typeError],
    ['mixed content is text', strings, v('<b>x</b> tail'), { value: ['<b>x</b> tail'] }],
    ['nested arrays', { type: 'array', items: ints }, v('<row><i>1</i><i>2</i></row><row>[3]</row>'), { value: [[1, 2], [3]] }],
    ['a bare scalar in nested arrays', { type: 'array', items: ints }, v('5'), { value: [[5]] }],
    [
      'children naming the fields of one object item are one item',
      { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, id: { type: 'integer' } } } },
      v('<name>Ana</name><id>7</id>'),
      { value: [{ name: 'Ana', id: 7 }] },
    ],
    [
      'item wrappers around object items',
      { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } },
      v('<item><id>1</id></item><item>{"id": 2}</item>'),
      { value: [{ id: 1 }, { id: 2 }] },
    ],
  ])('%s', (_label, schema, specs, expected) => check(schema, specs, expected));
});

describe('rule 14: objects and $ref', () => {
  const venue = { type: 'object', properties: { city: { type: 'string' }, capacity: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } };
  it.each<[string, JsonSchema, ArgSpec[], Expected]>([
    ['child elements typed by properties', venue, v('<city> Paris </city><capacity>5</capacity>'), { value: { city: 'Paris', capacity: 5 } }],
    ['a repeated array child', venue, v('<tags>a</tags><tags>b</tags>'), { value: { tags: ['a', 'b'] } }],
    ['a repeated non-array child', venue, v('<city>a</city><city>b</city>'), { category: 'duplicate_param' }],
    ['a JSON object literal', venue, v('{"city": "Rome", "capacity": 9}'), { value: { city: 'Rome', capacity: 9 } }],
    ['an empty element is {}', venue, v(''), { value: {} }],
    ['plain text is a type error', venue, v('Paris'), typeError],
    ['unknown children stay strings for AJV', venue, v('<zip>75001</zip>'), { value: { zip: '75001' } }],
    ['an unknown child of a closed object', { ...venue, additionalProperties: false }, v('<cty>x</cty>'), { category: 'validation_error', keyword: 'additionalProperties' }],
    ['additionalProperties types unknown children', { type: 'object', additionalProperties: { type: 'integer' } }, v('<a>1</a><b>2</b>'), { value: { a: 1, b: 2 } }],
    ['a local $ref', { $ref: '#/$defs/venue' }, v('<capacity>3</capacity>'), { value: { capacity: 3 } }],
    ['attributes inside an object', venue, v('<city name="x">a</city>'), { malformed: 'attributes_not_supported' }],
    ['mismatched tags inside an object', venue, v('<city>a</capacity>'), { malformed: 'malformed_xml' }],
  ])('%s', (_label, schema, specs, expected) => {
    const { registry } = toolWith({ type: 'object', $defs: { venue }, properties: { v: schema } });
    const outcome = validateCalls([xmlCall('t', specs)], { registry, limits: DEFAULT_LIMITS });
    if ('value' in expected) expect(outcome.ok && outcome.value[0]?.args['v']).toStrictEqual(expected.value);
    else if ('malformed' in expected) expect(!outcome.ok && outcome.problem.kind === 'malformed' && outcome.problem.problem.category).toBe(expected.malformed);
    else {
      expect(!outcome.ok && outcome.problem.kind === 'rejected' && outcome.problem.rejection.category).toBe(expected.category);
      if (expected.keyword !== undefined && !outcome.ok && outcome.problem.kind === 'rejected') expect(outcome.problem.rejection.issues[0]?.keyword).toBe(expected.keyword);
    }
  });

  it('resolves recursive $refs by the data, not forever', () => {
    const tree = {
      type: 'object',
      $defs: { node: { type: 'object', properties: { value: { type: 'integer' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
      properties: { v: { $ref: '#/$defs/node' } },
    };
    const { registry } = toolWith(tree);
    const raw = '<value>1</value><children><node><value>2</value><children><node><value>3</value></node></children></node></children>';
    const outcome = validateCalls([xmlCall('t', v(raw))], { registry, limits: DEFAULT_LIMITS });
    expect(outcome.ok && outcome.value[0]?.args['v']).toEqual({ value: 1, children: [{ value: 2, children: [{ value: 3 }] }] });
  });

  it.each([
    ['a self-reference', { type: 'object', properties: { v: { $ref: '#/properties/v' } } }],
    ['a two-step loop', { type: 'object', $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, properties: { v: { $ref: '#/$defs/a' } } }],
    ['a dangling reference', { type: 'object', properties: { v: { $ref: '#/$defs/missing' } } }],
  ])('rejects %s at registration', (_label, parameters) => {
    expect(() => toolWith(parameters)).toThrow(/\$ref/);
  });
});

describe('unions, anyOf, enum and untyped values', () => {
  it.each<[string, JsonSchema, string | null, Expected]>([
    ['string|null: empty is null', { type: ['string', 'null'] }, '', { value: null }],
    ['string|null: "null" is null', { type: ['string', 'null'] }, 'null', { value: null }],
    ['string|null: text is a string', { type: ['string', 'null'] }, 'x', { value: 'x' }],
    ['integer|string: digits are an integer', { type: ['integer', 'string'] }, '5', { value: 5 }],
    ['integer|string: 007 is a string', { type: ['integer', 'string'] }, '007', { value: '007' }],
    ['boolean|integer', { type: ['boolean', 'integer'] }, 'True', { value: true }],
    ['array|string: a bare word is a string', { type: ['array', 'string'], items: { type: 'string' } }, 'word', { value: 'word' }],
    ['array|string: children are an array', { type: ['array', 'string'], items: { type: 'string' } }, '<i>a</i>', { value: ['a'] }],
    ['array|null: a bare scalar is one item', { type: ['array', 'null'], items: { type: 'integer' } }, '3', { value: [3] }],
    ['object|null: empty is null', { type: ['object', 'null'] }, '', { value: null }],
    ['integer|null: a word is a type error', { type: ['integer', 'null'] }, 'abc', typeError],
    ['anyOf integer/string: digits', { anyOf: [{ type: 'string' }, { type: 'integer' }] }, '12', { value: 12 }],
    ['anyOf integer/string: a word', { anyOf: [{ type: 'integer' }, { type: 'string' }] }, 'abc', { value: 'abc' }],
    ['anyOf pydantic Optional[int]', { anyOf: [{ type: 'integer' }, { type: 'null' }] }, '', { value: null }],
    ['anyOf with a failing conversion', { anyOf: [{ type: 'integer' }, { type: 'null' }] }, 'x', { category: 'validation_error', keyword: 'anyOf' }],
    ['oneOf picks the branch that validates', { oneOf: [{ type: 'integer', minimum: 10 }, { type: 'string' }] }, '5', { value: '5' }],
    ['enum without type: a number', { enum: ['a', 1, true, null] }, '1', { value: 1 }],
    ['enum without type: a boolean', { enum: ['a', 1, true, null] }, 'true', { value: true }],
    ['enum without type: a string', { enum: ['a', 1, true, null] }, ' a ', { value: 'a' }],
    ['enum without type: null', { enum: ['a', 1, true, null] }, 'null', { value: null }],
    ['enum without type: no match', { enum: ['a', 1] }, 'b', { category: 'validation_error', keyword: 'enum' }],
    ['const without type', { const: 3 }, '3', { value: 3 }],
    ['typed enum with integers', { type: 'integer', enum: [1, 2] }, '2', { value: 2 }],
    ['no type keeps the string', {}, ' 42 ', { value: '42' }],
  ])('%s', (_label, schema, raw, expected) => check(schema, v(raw), expected));

  it('picks the discriminated anyOf branch whose fields fit', () => {
    const schema = {
      anyOf: [
        { type: 'object', properties: { kind: { const: 'a' }, n: { type: 'string' } }, required: ['kind'] },
        { type: 'object', properties: { kind: { const: 'b' }, n: { type: 'integer' } }, required: ['kind'] },
      ],
    };
    check(schema, v('<kind>b</kind><n>4</n>'), { value: { kind: 'b', n: 4 } });
    check(schema, v('<kind>a</kind><n>4</n>'), { value: { kind: 'a', n: '4' } });
  });
});

describe('rule 15 and depth: JSON literals and nesting', () => {
  const anyObject = { type: 'object' };
  it.each<[string, JsonSchema, string, Expected]>([
    ['duplicate JSON keys', anyObject, '{"a": 1, "a": 2}', { category: 'duplicate_param' }],
    ['a __proto__ JSON key', anyObject, '{"__proto__": {"polluted": true}}', { category: 'forbidden_name' }],
    ['a nested constructor JSON key', anyObject, '{"a": {"constructor": 1}}', { category: 'forbidden_name' }],
    ['a __proto__ child element', anyObject, '<__proto__><polluted>1</polluted></__proto__>', { category: 'forbidden_name' }],
    ['a toString child element', anyObject, '<toString>x</toString>', { category: 'forbidden_name' }],
    ['a lone surrogate escape in JSON', anyObject, '{"a": "\\ud800"}', { malformed: 'invalid_character' }],
  ])('%s', (_label, schema, raw, expected) => check(schema, v(raw), expected));

  const limits = { ...DEFAULT_LIMITS, maxDepth: 4 };
  const nested = { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: ['integer', 'object'] } } };
  it.each<[string, JsonSchema, string, Expected]>([
    ['children at depth 3 and 4 pass', nested, '<a><b>1</b></a>', { value: { a: { b: 1 } } }],
    ['children at depth 5 fail', nested, '<a><b><c>1</c></b></a>', { malformed: 'limit_exceeded' }],
    ['JSON nesting counts on top of the element', { type: 'array' }, '[[1]]', { value: [[1]] }],
    ['JSON nesting past the limit', { type: 'array' }, '[[[1]]]', { malformed: 'limit_exceeded' }],
    ['bare scalars wrapped past the limit', { type: 'array', items: { type: 'array', items: { type: 'array', items: { type: 'array' } } } }, '1', { malformed: 'limit_exceeded' }],
  ])('%s (maxDepth 4)', (_label, schema, raw, expected) => check(schema, v(raw), expected, limits));

  it('a repeated argument whose schema is not an array is duplicate_param', () => {
    check({ type: 'string' }, [['v', 'a'], ['v', 'b']], { category: 'duplicate_param' });
  });

  it('leaves Object.prototype untouched', () => {
    check({ type: 'object' }, v('<__proto__><polluted>1</polluted></__proto__>'), { category: 'forbidden_name' });
    check({ type: 'object' }, v('{"__proto__": {"polluted": 1}}'), { category: 'forbidden_name' });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });
});
