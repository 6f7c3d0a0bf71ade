/** Tools shared by the tools and protocol test suites. */
import { defineTool } from '../../src/tools/define-tool.js';

const noop = async () => 'ok';

export const lookupPlayer = defineTool({
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: {
    type: 'object',
    properties: { player_id: { type: 'integer', minimum: 1, description: 'The player number.' }, verbose: { type: 'boolean', default: false } },
    required: ['player_id'],
    additionalProperties: false,
  },
  readOnly: true,
  execute: noop,
});

export const listTeams = defineTool({
  name: 'list_teams',
  description: 'List teams, optionally by league.',
  parameters: { type: 'object', properties: { league: { type: 'string', enum: ['north', 'south'] } } },
  readOnly: true,
  execute: noop,
});

export const writeFile = defineTool({
  name: 'write_file',
  description: 'Write a file.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string', maxLength: 200, pattern: '^[\\w./-]+$' }, content: { type: 'string' } },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  verbatimParams: ['content'],
  execute: noop,
});

export const planMatch = defineTool({
  name: 'plan_match',
  description: 'Plan a match between teams.',
  parameters: {
    type: 'object',
    $defs: {
      player: {
        type: 'object',
        properties: { name: { type: 'string' }, number: { type: 'integer' }, captain: { type: 'boolean' } },
        required: ['name', 'number'],
        additionalProperties: false,
      },
    },
    properties: {
      home: { type: 'string' },
      away: { type: 'string' },
      lineup: { type: 'array', items: { $ref: '#/$defs/player' }, maxItems: 11 },
      tags: { type: 'array', items: { type: 'string' } },
      scores: { type: 'array', items: { type: 'number' } },
      venue: {
        type: 'object',
        properties: { city: { type: 'string' }, capacity: { type: ['integer', 'null'] } },
        required: ['city'],
      },
      kickoff: { anyOf: [{ type: 'integer' }, { type: 'string', maxLength: 40, format: 'date-time' }] },
      note: { type: ['string', 'null'] },
      mode: { enum: ['friendly', 'league', 3] },
      extra: {},
    },
    required: ['home', 'away'],
  },
  execute: noop,
});

export const fixtureTools = [lookupPlayer, listTeams, writeFile, planMatch];
