import { describe, expect, it } from 'vitest';
import { editDistance, suggestName } from '../../src/tools/suggest-name.js';

const tools = ['lookup_player', 'list_teams', 'write_file', 'plan_match', 'read_file'];
const params = ['player_id', 'verbose', 'league'];

describe('suggestName', () => {
  it.each([
    ['lookup_playr', tools, 'lookup_player'],
    ['lookup_plaeyr', tools, 'lookup_player'],
    ['lookupPlayer', tools, 'lookup_player'],
    ['LOOKUP_PLAYER', tools, 'lookup_player'],
    ['lookup-player', tools, 'lookup_player'],
    ['lookup', tools, 'lookup_player'],
    ['writefile', tools, 'write_file'],
    ['red_file', tools, 'read_file'],
    ['playerId', params, 'player_id'],
    ['player', params, 'player_id'],
    ['verbos', params, 'verbose'],
    ['leauge', params, 'league'],
  ])('%s → %s', (name, candidates, expected) => {
    expect(suggestName(name, candidates)).toBe(expected);
  });

  it.each([
    ['foo', tools],
    ['x', tools],
    ['delete_everything', tools],
    ['id', params],
    ['', tools],
    ['zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', tools],
  ])('suggests nothing for %j', (name, candidates) => {
    expect(suggestName(name, candidates)).toBeUndefined();
  });

  it('never suggests the name itself, and nothing from an empty list', () => {
    expect(suggestName('a', ['a'])).toBeUndefined();
    expect(suggestName('abc', [])).toBeUndefined();
  });

  it('stays cheap on a huge hostile name', () => {
    const huge = `lookup_player${'x'.repeat(1_000_000)}`;
    // Compared by its first 64 characters only; the prefix rule still finds the tool.
    expect(suggestName(huge, tools)).toBe('lookup_player');
    expect(suggestName('q'.repeat(1_000_000), tools)).toBeUndefined();
  });

  it.each([
    ['', '', 0],
    ['abc', 'abc', 0],
    ['abc', 'acb', 1],
    ['kitten', 'sitting', 3],
    ['ca', 'abc', 3],
  ])('editDistance(%j, %j) = %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
  });
});
