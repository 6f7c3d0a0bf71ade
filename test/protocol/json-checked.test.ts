import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseCheckedJson } from '../../src/protocol/json-checked.js';
import { FORBIDDEN_NAMES, isForbiddenName } from '../../src/protocol/forbidden-names.js';
import { guardPrototype } from './helpers.js';

guardPrototype();

const options = { maxDepth: 16, baseDepth: 2 };

describe('parseCheckedJson', () => {
  it.each([
    ['{"a":1,"b":[true,false,null],"c":{"d":"x"}}'],
    ['[]'],
    ['{}'],
    ['"text"'],
    ['-0.5e+10'],
    ['  {"a" : "\\u00e9\\n\\t\\"\\\\\\/"}  '],
    ['"\\ud83d\\ude00"'],
    ['{"__proto_":1,"Constructor":2,"toString ":3}'],
  ])('parses %s like JSON.parse', (text) => {
    expect(parseCheckedJson(text, options)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it.each([
    ['{"a":1,"a":2}', 'duplicate_param', '/a'],
    ['{"x":{"b":1,"b":1}}', 'duplicate_param', '/x/b'],
    ['{"__proto__":{"polluted":true}}', 'forbidden_name', '/__proto__'],
    ['{"a":[{"constructor":{"prototype":{}}}]}', 'forbidden_name', '/a/0/constructor'],
    ['{"toString":1}', 'forbidden_name', '/toString'],
    ['{"prototype":1}', 'forbidden_name', '/prototype'],
    ['{"__defineGetter__":1}', 'forbidden_name', '/__defineGetter__'],
    ['{"a/b":{"hasOwnProperty":1}}', 'forbidden_name', '/a~1b/hasOwnProperty'],
    ['{"a":"\\ud800"}', 'invalid_character', '/a'],
    ['{"\\udc00":1}', 'invalid_character', ''],
    ['["ok","\\u0001"]', 'invalid_character', '/1'],
    ['["\uffff"]', 'invalid_character', '/0'],
    ['["a\u0002"]', 'invalid_character', '/0'],
    ['', 'invalid_json', ''],
    ['{', 'invalid_json', ''],
    ['{"a":1,}', 'invalid_json', ''],
    ['[1,]', 'invalid_json', '/1'],
    ['{a:1}', 'invalid_json', ''],
    ["{'a':1}", 'invalid_json', ''],
    ['007', 'invalid_json', ''],
    ['0x1F', 'invalid_json', ''],
    ['NaN', 'invalid_json', ''],
    ['Infinity', 'invalid_json', ''],
    ['1.', 'invalid_json', ''],
    ['"\\x41"', 'invalid_json', ''],
    ['"\\u12"', 'invalid_json', ''],
    ['"raw\nnewline"', 'invalid_json', ''],
    ['"unterminated', 'invalid_json', ''],
    ['{} {}', 'invalid_json', ''],
    ['\ufeff{}', 'invalid_json', ''],
    ['tru', 'invalid_json', ''],
  ])('%j → %s at %j', (text, category, path) => {
    expect(parseCheckedJson(text, options)).toEqual({ ok: false, problem: { category, path, message: expect.any(String) } });
  });

  it('counts nesting on top of baseDepth', () => {
    // Members of the top object sit at baseDepth + 1.
    expect(parseCheckedJson('{"a":{"b":1}}', { maxDepth: 4, baseDepth: 2 }).ok).toBe(true);
    expect(parseCheckedJson('{"a":{"b":1}}', { maxDepth: 3, baseDepth: 2 })).toEqual({
      ok: false,
      problem: { category: 'limit_exceeded', path: '/a', message: expect.any(String) },
    });
    expect(parseCheckedJson('[[[]]]', { maxDepth: 3, baseDepth: 1 }).ok).toBe(false);
    expect(parseCheckedJson('[[[]]]', { maxDepth: 4, baseDepth: 1 }).ok).toBe(true);
  });

  it('survives 100k nested brackets without recursion', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(parseCheckedJson(deep, { maxDepth: 200_000, baseDepth: 0 }).ok).toBe(true);
    expect(parseCheckedJson(deep, options)).toMatchObject({ ok: false, problem: { category: 'limit_exceeded' } });
    expect(parseCheckedJson('{"a":'.repeat(50_000), options)).toMatchObject({ ok: false, problem: { category: 'limit_exceeded' } });
  });

  it('builds plain objects whose keys are own data properties', () => {
    const parsed = parseCheckedJson('{"a":{"b":[1]}}', options);
    expect(parsed.ok && Object.getPrototypeOf(parsed.value)).toBe(Object.prototype);
    expect(parsed.ok && Object.getOwnPropertyDescriptor(parsed.value, 'a')).toMatchObject({ enumerable: true, writable: true });
  });

  it('keeps an integer literal past 2^53 − 1 as its digits, which JSON.parse would round', () => {
    expect(parseCheckedJson('{"id": 9007199254740993, "n": [-12345678901234567890, 9007199254740991, 1e300, 2.5]}', { maxDepth: 16, baseDepth: 0 })).toEqual({
      ok: true,
      value: { id: '9007199254740993', n: ['-12345678901234567890', 9007199254740991, 1e300, 2.5] },
    });
  });

  it('agrees with JSON.parse on JSON it accepts (property)', () => {
    const safeKey = fc.string({ maxLength: 6 }).filter((key) => !isForbiddenName(key));
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, true, false),
        // Integers past 2^53 − 1 written without an exponent are kept as text (tested apart).
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((number) => Number.isSafeInteger(number) || !/^-?\d+$/.test(JSON.stringify(number))),
        fc.string({ unit: 'grapheme' }),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(safeKey, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        const text = JSON.stringify(value);
        const parsed = parseCheckedJson(text, { maxDepth: 64, baseDepth: 0 });
        expect(parsed).toEqual({ ok: true, value: JSON.parse(text) });
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary text and reports only its categories (property)', () => {
    const categories = new Set(['duplicate_param', 'forbidden_name', 'limit_exceeded', 'invalid_json', 'invalid_character']);
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.json()), (text) => {
        const parsed = parseCheckedJson(text, { maxDepth: 5, baseDepth: 1 });
        if (!parsed.ok) expect(categories.has(parsed.problem.category)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });
});

describe('forbidden names', () => {
  it('are the own names of Object.prototype plus prototype', () => {
    for (const name of Object.getOwnPropertyNames(Object.prototype)) expect(isForbiddenName(name)).toBe(true);
    expect([...FORBIDDEN_NAMES]).toContain('prototype');
    expect(FORBIDDEN_NAMES.size).toBe(Object.getOwnPropertyNames(Object.prototype).length + 1);
  });

  it.each(['Constructor', '__PROTO__', 'tostring', 'path', ''])('%j is allowed (names compare exactly)', (name) => {
    expect(isForbiddenName(name)).toBe(false);
  });
});
