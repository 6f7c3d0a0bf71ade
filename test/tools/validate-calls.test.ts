/** The validate stage as a whole, and how names are compared (docs/protocol.md rule 9): names, permissions, order, first problem. */
import { describe, expect, it } from 'vitest';
import type { RawCall } from '../../src/protocol/types.js';
import { createRegistry } from '../../src/tools/registry.js';
import { validateCalls } from '../../src/tools/validate-calls.js';
import { fixtureTools } from './fixtures.js';
import { DEFAULT_LIMITS, nativeCall, toolWith, xmlCall } from './helpers.js';

const registry = createRegistry(fixtureTools);
const validate = (calls: RawCall[], allowed?: ReadonlySet<string>) =>
  validateCalls(calls, { registry, limits: DEFAULT_LIMITS, ...(allowed !== undefined && { allowed }) });

function rejection(calls: RawCall[], allowed?: ReadonlySet<string>) {
  const outcome = validate(calls, allowed);
  if (outcome.ok || outcome.problem.kind !== 'rejected') throw new Error(`expected a rejection, got ${JSON.stringify(outcome)}`);
  return outcome.problem.rejection;
}

describe('tool names (rule 9)', () => {
  it('suggests the nearest tool for an unknown one and lists the available tools', () => {
    const result = rejection([xmlCall('lookup_playr', [['player_id', '7']])]);
    expect(result).toMatchObject({ code: 'unknown_tool', category: 'unknown_tool', name: 'lookup_playr', suggestion: 'lookup_player', callId: 'call_lookup_playr' });
    expect(result.issues[0]?.suggestion).toBe('lookup_player');
    expect(result.message).toBe('Unknown tool "lookup_playr". Did you mean "lookup_player"? Available tools: lookup_player, list_teams, write_file, plan_match.');
  });

  it('gives no suggestion when nothing is close', () => {
    const result = rejection([xmlCall('foo')]);
    expect(result.suggestion).toBeUndefined();
    expect(result.message).toBe('Unknown tool "foo". Available tools: lookup_player, list_teams, write_file, plan_match.');
  });

  it.each(['Lookup_player', 'LOOKUP_PLAYER', 'lookup_player\u200b', 'ns:lookup_player', 'lookup_playeｒ'])('compares %j exactly: unknown_tool', (name) => {
    expect(rejection([xmlCall(name)]).code).toBe('unknown_tool');
  });

  it.each(['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'prototype', '__defineGetter__'])(
    '%s is forbidden_name with code unknown_tool, in either format',
    (name) => {
      for (const call of [xmlCall(name), nativeCall(name, '{}')]) {
        const result = rejection([call]);
        expect(result).toMatchObject({ code: 'unknown_tool', category: 'forbidden_name' });
      }
      expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
    },
  );

  it('rejects a registered tool outside the allowed set as not_permitted, listing the permitted ones', () => {
    const result = rejection([xmlCall('write_file', [['path', 'a'], ['content', 'b']])], new Set(['lookup_player', 'list_teams']));
    expect(result).toMatchObject({ code: 'not_permitted', category: 'not_permitted' });
    expect(result.message).toBe('Tool "write_file" is not permitted for this agent. Permitted tools: lookup_player, list_teams.');
  });

  it('suggests only among permitted tools', () => {
    const result = rejection([xmlCall('write_fil')], new Set(['lookup_player']));
    expect(result.suggestion).toBeUndefined();
    expect(result.message).toContain('Available tools: lookup_player.');
  });
});

describe('the block as a whole', () => {
  it('returns every call in document order with normalized arguments and defaults', () => {
    const outcome = validate([xmlCall('lookup_player', [['player_id', '7']], 'c1'), xmlCall('list_teams', [], 'c2'), nativeCall('lookup_player', '{"player_id": 8}', 'c3')]);
    expect(outcome).toEqual({
      ok: true,
      value: [
        { callId: 'c1', name: 'lookup_player', args: { player_id: 7, verbose: false } },
        { callId: 'c2', name: 'list_teams', args: {} },
        { callId: 'c3', name: 'lookup_player', args: { player_id: 8, verbose: false } },
      ],
    });
  });

  it('rejects the whole block for one invalid call, reporting the first problem in document order', () => {
    const result = rejection([
      xmlCall('list_teams', [], 'ok'),
      xmlCall('lookup_player', [['player_id', 'seven']], 'bad1'),
      xmlCall('nope', [], 'bad2'),
    ]);
    expect(result).toMatchObject({ callId: 'bad1', code: 'invalid_arguments', category: 'validation_error' });
  });

  it('puts a malformed problem first when it comes first', () => {
    const outcome = validate([xmlCall('plan_match', [['home', 'a ]]> b'], ['away', 'x']]), xmlCall('nope')]);
    expect(!outcome.ok && outcome.problem.kind === 'malformed' && outcome.problem.problem.category).toBe('malformed_xml');
  });

  it('checks the call count and call ids again', () => {
    const many = Array.from({ length: 17 }, (_, index) => xmlCall('list_teams', [], `c${index}`));
    const tooMany = validate(many);
    expect(!tooMany.ok && tooMany.problem.kind === 'malformed' && tooMany.problem.problem.category).toBe('limit_exceeded');
    const twins = validate([nativeCall('list_teams', '{}', 'same'), nativeCall('list_teams', '{}', 'same')]);
    expect(!twins.ok && twins.problem.kind === 'malformed' && twins.problem.problem.category).toBe('duplicate_call_id');
  });

  it('accepts an empty list', () => {
    expect(validate([])).toEqual({ ok: true, value: [] });
  });
});

describe('every issue at once', () => {
  const { registry: booking } = toolWith({
    type: 'object',
    properties: {
      room: { type: 'integer', minimum: 1, maximum: 40 },
      nights: { type: 'integer', minimum: 1 },
      guest: { type: 'string', minLength: 2 },
      breakfast: { type: 'boolean' },
    },
    required: ['room', 'nights', 'guest'],
    additionalProperties: false,
  });
  const book = (text: string, limits = DEFAULT_LIMITS) => validateCalls([nativeCall('t', text)], { registry: booking, limits });
  const rejection = (outcome: ReturnType<typeof book>) => (!outcome.ok && outcome.problem.kind === 'rejected' ? outcome.problem.rejection : undefined);

  it('reports each wrong argument, the first as it was alone', () => {
    const text = '{"room": 99, "nights": 0, "guest": "A", "breakfast": "yes"}';
    const all = rejection(book(text))!;
    const alone = rejection(book(text, { ...DEFAULT_LIMITS, maxIssues: 1 }))!;
    expect(alone.issues).toHaveLength(1);
    expect(all.issues[0]).toEqual(alone.issues[0]);
    expect({ category: all.category, message: all.message }).toEqual({ category: alone.category, message: alone.message });
    expect(all.issues.map((issue) => issue.property)).toEqual(['room', 'nights', 'guest', 'breakfast']);
    expect(all.issues.map((issue) => issue.keyword)).toEqual(['maximum', 'minimum', 'minLength', 'type']);
  });

  it('stops at maxIssues, and names a missing and an unknown parameter too', () => {
    const all = rejection(book('{"nights": "two", "guest": 7, "pets": 1}', { ...DEFAULT_LIMITS, maxIssues: 3 }))!;
    expect(all.issues).toHaveLength(3);
    expect(new Set(all.issues.map((issue) => issue.message)).size).toBe(3);
  });

  it('leaves a valid call as it was', () => {
    expect(book('{"room": 4, "nights": 2, "guest": "Ana"}')).toMatchObject({ ok: true, value: [{ args: { room: 4, nights: 2, guest: 'Ana' } }] });
  });
});
