/** Native `arguments` text: empty means `{}`, else exactly one JSON object read by the checking parser (docs/protocol.md rule 17). */
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/tools/registry.js';
import { validateCalls } from '../../src/tools/validate-calls.js';
import { fixtureTools } from './fixtures.js';
import { DEFAULT_LIMITS, nativeCall } from './helpers.js';

const registry = createRegistry(fixtureTools);
const run = (argumentsText: string, name = 'list_teams', limits = DEFAULT_LIMITS) => validateCalls([nativeCall(name, argumentsText)], { registry, limits });

describe('native arguments', () => {
  it.each(['', '   ', '\n\t ', '{}', ' { } '])('%j is {}', (text) => {
    expect(run(text)).toEqual({ ok: true, value: [{ callId: 'native_list_teams', name: 'list_teams', args: {} }] });
  });

  it.each([
    ['a double-encoded string', '"{\\"league\\": \\"north\\"}"', 'invalid_arguments_json'],
    ['an array', '[{"league": "north"}]', 'invalid_arguments_json'],
    ['NaN', '{"league": NaN}', 'invalid_arguments_json'],
    ['a number', '42', 'invalid_arguments_json'],
    ['null', 'null', 'invalid_arguments_json'],
    ['two objects', '{} {}', 'invalid_arguments_json'],
    ['a trailing comma', '{"league": "north",}', 'invalid_arguments_json'],
    ['single quotes', "{'league': 'north'}", 'invalid_arguments_json'],
    ['truncated JSON', '{"league": "nor', 'invalid_arguments_json'],
    ['duplicate keys', '{"league": "north", "league": "south"}', 'duplicate_param'],
    ['a __proto__ key', '{"__proto__": {"polluted": true}}', 'forbidden_name'],
    ['a nested constructor key', '{"league": {"constructor": {"prototype": 1}}}', 'forbidden_name'],
    ['a bad enum value', '{"league": "east"}', 'validation_error'],
  ])('rejects %s with code invalid_arguments and category %s', (_label, text, category) => {
    const outcome = run(text);
    expect(!outcome.ok && outcome.problem.kind === 'rejected' && outcome.problem.rejection).toMatchObject({ code: 'invalid_arguments', category });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it.each([
    ['a lone surrogate in a value', '{"league": "\\ud800"}', 'invalid_character'],
    ['a control character in a key', '{"lea\\u0001gue": "north"}', 'invalid_character'],
    ['nesting past maxDepth', `{"a": ${'['.repeat(20)}${']'.repeat(20)}}`, 'limit_exceeded'],
  ])('treats %s as malformed %s', (_label, text, category) => {
    const outcome = run(text, 'plan_match');
    expect(!outcome.ok && outcome.problem.kind === 'malformed' && outcome.problem.problem.category).toBe(category);
  });

  it('rejects an integer past 2^53 − 1 as a type error instead of running a rounded number', () => {
    const registry = createRegistry([{ ...fixtureTools[0]!, name: 'pay', parameters: { type: 'object', properties: { amount: { type: 'integer' }, ref: { type: 'number' } } } }]);
    const pay = (text: string) => validateCalls([nativeCall('pay', text)], { registry, limits: DEFAULT_LIMITS });
    for (const literal of ['9007199254740993', '-9007199254740993', '12345678901234567890']) {
      const outcome = pay(`{"amount": ${literal}}`);
      expect(!outcome.ok && outcome.problem.kind === 'rejected' && outcome.problem.rejection).toMatchObject({ code: 'invalid_arguments', category: 'validation_error', issues: [{ keyword: 'type' }] });
    }
    // The largest safe integer runs as written; a number with a fraction or exponent is a number.
    expect(pay('{"amount": 9007199254740991, "ref": 1e300}')).toMatchObject({ ok: true, value: [{ args: { amount: 9007199254740991, ref: 1e300 } }] });
    expect(pay('{"amount": 1, "ref": 9007199254740993.5}')).toMatchObject({ ok: true });
  });

  it('limits the length of the arguments text to maxActionChars', () => {
    const text = JSON.stringify({ home: 'x'.repeat(200), away: 'y' });
    const outcome = run(text, 'plan_match', { ...DEFAULT_LIMITS, maxActionChars: 100 });
    expect(!outcome.ok && outcome.problem.kind === 'malformed' && outcome.problem.problem.category).toBe('limit_exceeded');
  });

  it('counts depth from the call: arguments are at depth 2', () => {
    const limits = { ...DEFAULT_LIMITS, maxDepth: 3 };
    const ok = run('{"home": "a", "away": "b", "extra": [1]}', 'plan_match', limits);
    expect(ok.ok).toBe(true);
    const deep = run('{"home": "a", "away": "b", "extra": [[1]]}', 'plan_match', limits);
    expect(!deep.ok && deep.problem.kind === 'malformed' && deep.problem.problem.category).toBe('limit_exceeded');
  });

  it('fills AJV defaults into the returned arguments', () => {
    const outcome = validateCalls([nativeCall('lookup_player', '{"player_id": 3}')], { registry, limits: DEFAULT_LIMITS });
    expect(outcome.ok && outcome.value[0]?.args).toEqual({ player_id: 3, verbose: false });
  });
});
