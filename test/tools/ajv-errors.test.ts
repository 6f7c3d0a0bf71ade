/** AJV's first error (docs/protocol.md rule 16), worded for the model with its keyword, path and property. */
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/tools/registry.js';
import { validateCalls } from '../../src/tools/validate-calls.js';
import { fixtureTools } from './fixtures.js';
import { DEFAULT_LIMITS, nativeCall, toolWith, xmlCall, type ArgSpec } from './helpers.js';

const registry = createRegistry(fixtureTools);

function issueFor(name: string, specs: ArgSpec[]) {
  const outcome = validateCalls([xmlCall(name, specs)], { registry, limits: DEFAULT_LIMITS });
  if (outcome.ok || outcome.problem.kind !== 'rejected') throw new Error(`expected a rejection, got ${JSON.stringify(outcome)}`);
  expect(outcome.problem.rejection.code).toBe('invalid_arguments');
  return { rejection: outcome.problem.rejection, issue: outcome.problem.rejection.issues[0] };
}

describe('AJV errors as issues', () => {
  it('names a missing required parameter and lists the parameters with their types', () => {
    const { issue, rejection } = issueFor('lookup_player', []);
    expect(issue).toMatchObject({ category: 'validation_error', keyword: 'required', path: '/player_id', property: 'player_id' });
    expect(rejection.message).toBe(
      'Invalid arguments for "lookup_player": Missing required parameter "player_id". Parameters: player_id (integer, required), verbose (boolean).',
    );
  });

  it('suggests the parameter a misspelled argument meant ("did you mean player_id?")', () => {
    const { issue, rejection } = issueFor('lookup_player', [['playerId', '7']]);
    expect(issue).toMatchObject({ keyword: 'additionalProperties', property: 'playerId', suggestion: 'player_id' });
    expect(rejection.suggestion).toBe('player_id');
    expect(issue?.message).toBe('Unknown parameter "playerId". Did you mean "player_id"? Allowed: player_id, verbose.');
  });

  it('mentions a near miss in an open schema when the intended parameter is required', () => {
    const { tool } = toolWith({ type: 'object', properties: { player_id: { type: 'integer' } }, required: ['player_id'] });
    const outcome = validateCalls([xmlCall('t', [['playerid', '7']])], { registry: createRegistry([tool]), limits: DEFAULT_LIMITS });
    const issue = !outcome.ok && outcome.problem.kind === 'rejected' ? outcome.problem.rejection.issues[0] : undefined;
    expect(issue).toMatchObject({ keyword: 'required', property: 'player_id', suggestion: 'player_id' });
    expect(issue?.message).toContain('You sent "playerid": did you mean "player_id"?');
  });

  it('keeps unknown arguments of an open schema', () => {
    const { tool } = toolWith({ type: 'object', properties: { a: { type: 'string' } } });
    const outcome = validateCalls([xmlCall('t', [['zzz', '1']])], { registry: createRegistry([tool]), limits: DEFAULT_LIMITS });
    expect(outcome.ok && outcome.value[0]?.args).toEqual({ zzz: '1' });
  });

  it('lists enum values and suggests the nearest', () => {
    const { issue } = issueFor('list_teams', [['league', 'nort']]);
    expect(issue).toMatchObject({ keyword: 'enum', path: '/league', property: 'league', suggestion: 'north', allowed: ['"north"', '"south"'] });
    expect(issue?.message).toBe('Parameter "league" is the string "nort", which is not allowed. Use one of: "north", "south". Did you mean "north"?');
  });

  it('says the expected type and what was received', () => {
    const { issue } = issueFor('lookup_player', [['player_id', '007']]);
    expect(issue).toMatchObject({ keyword: 'type', path: '/player_id', allowed: ['integer'] });
    expect(issue?.message).toMatch(/^Parameter "player_id" must be an integer, got the string "007"\. Write a plain JSON number/);
  });

  it('points into nested values', () => {
    const { issue } = issueFor('plan_match', [['home', 'a'], ['away', 'b'], ['lineup', '<p><name>Ana</name><number>x</number></p>']]);
    expect(issue).toMatchObject({ keyword: 'type', path: '/lineup/0/number', property: 'number' });
    expect(issue?.message).toContain('The value at /lineup/0/number must be an integer');
  });

  it('names the forms of a failed anyOf', () => {
    const { issue } = issueFor('plan_match', [['home', 'a'], ['away', 'b'], ['kickoff', 'tomorrow']]);
    expect(issue).toMatchObject({ keyword: 'anyOf', path: '/kickoff' });
    expect(issue?.message).toContain('does not match any allowed form: integer | string');
  });

  it('reports other keywords with their AJV message', () => {
    const { issue } = issueFor('lookup_player', [['player_id', '0']]);
    expect(issue).toMatchObject({ keyword: 'minimum', path: '/player_id' });
    expect(issue?.message).toBe('Parameter "player_id" must be >= 1, got number 0.');
  });

  it('validates native arguments without converting them', () => {
    const outcome = validateCalls([nativeCall('lookup_player', '{"player_id": "7"}')], { registry, limits: DEFAULT_LIMITS });
    expect(!outcome.ok && outcome.problem.kind === 'rejected' && outcome.problem.rejection.issues[0]?.keyword).toBe('type');
  });
});
