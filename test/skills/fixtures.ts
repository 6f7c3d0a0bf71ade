import { defineTool } from '../../src/index.js';
import type { EventRecord } from '../../src/testing/index.js';

export { action, call } from '../agent/fixtures.js';

/** A roster behind two async tools (so their calls take limiter slots), recording every run. */
export function teamTools() {
  const players = new Map([
    ['7', { name: 'Ana', team: 'red' }],
    ['8', { name: 'Cy', team: 'red' }],
    ['9', { name: 'Bo', team: 'blue' }],
  ]);
  const executed: string[] = [];
  const lookupPlayer = defineTool({
    name: 'lookup_player',
    description: 'Find a player by id.',
    parameters: {
      type: 'object',
      properties: { player_id: { type: 'string', maxLength: 16 } },
      required: ['player_id'],
      additionalProperties: false,
    },
    readOnly: true,
    execute: async ({ player_id }) => {
      executed.push(`lookup_player:${String(player_id)}`);
      const player = players.get(player_id as string);
      if (player === undefined) throw new Error(`no player ${String(player_id)}`);
      return player;
    },
  });
  const listTeam = defineTool({
    name: 'list_team',
    description: 'List the players of a team.',
    parameters: {
      type: 'object',
      properties: { team: { type: 'string', enum: ['red', 'blue'] }, limit: { type: 'integer', default: 10 } },
      required: ['team'],
      additionalProperties: false,
    },
    readOnly: true,
    execute: async ({ team, limit }) => {
      executed.push(`list_team:${String(team)}:${String(limit)}`);
      return [...players.values()].filter((player) => player.team === team).map((player) => player.name);
    },
  });
  return { players, executed, lookupPlayer, listTeam };
}

/** `type:callId:name` for the tool events of a record, the easiest order to assert. */
export function toolTrace(events: EventRecord): string[] {
  return events.all
    .filter((event) => event.type === 'tool.started' || event.type === 'tool.completed' || event.type === 'tool.failed')
    .map((event) => {
      const data = event.data as { callId: string; name: string };
      return `${event.type}:${data.callId}:${data.name}`;
    });
}
