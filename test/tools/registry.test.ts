import { describe, expect, it } from 'vitest';
import { ConfigError, ToolSchemaError } from '../../src/errors.js';
import { createRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/types.js';
import { fixtureTools, listTeams, lookupPlayer } from './fixtures.js';

describe('createRegistry', () => {
  it('finds tools by exact name only', () => {
    const registry = createRegistry(fixtureTools);
    expect(registry.get('lookup_player')).toBe(lookupPlayer);
    expect(registry.get('Lookup_Player')).toBeUndefined();
    expect(registry.names()).toEqual(['lookup_player', 'list_teams', 'write_file', 'plan_match']);
    expect(registry.tools()).toHaveLength(4);
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf'])('finds nothing for %s', (name) => {
    expect(createRegistry(fixtureTools).get(name)).toBeUndefined();
  });

  it('throws duplicate_tool for two tools with one name', () => {
    const attempt = () => createRegistry([lookupPlayer, listTeams, lookupPlayer]);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow('two tools are named "lookup_player"');
    try {
      attempt();
    } catch (error) {
      expect((error as ConfigError).code).toBe('duplicate_tool');
    }
  });

  it('re-checks and compiles a copied tool', () => {
    const copy = { ...lookupPlayer } as Tool;
    const registry = createRegistry([copy]);
    expect(registry.validatorOf(copy).validate({ player_id: 3 })).toBe(true);
    expect(() => createRegistry([{ ...lookupPlayer, name: 'bad name' } as Tool])).toThrow(ToolSchemaError);
  });

  it('refuses things that are not tools', () => {
    expect(() => createRegistry([{ name: 'x' } as unknown as Tool])).toThrow('tools[0] is not a tool');
    expect(() => createRegistry('x' as unknown as Tool[])).toThrow(ConfigError);
  });

  it('throws for a tool it does not hold', () => {
    expect(() => createRegistry([lookupPlayer]).validatorOf({ ...listTeams } as Tool)).toThrow('not in this registry');
  });
});
