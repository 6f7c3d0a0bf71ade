import { defineTool } from '../../src/index.js';

/** Tools the agent suites share. Each call builds fresh state, so tests never leak into each other. */
export function rosterTools() {
  const players = new Map([
    ['7', { name: 'Ana', team: 'red' }],
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
    execute: ({ player_id }) => {
      executed.push(`lookup_player:${String(player_id)}`);
      return players.get(player_id as string) ?? null;
    },
  });
  const setTeam = defineTool({
    name: 'set_team',
    description: "Move a player to a team.",
    parameters: {
      type: 'object',
      properties: {
        player_id: { type: 'string', maxLength: 16 },
        team: { type: 'string', enum: ['red', 'blue'] },
      },
      required: ['player_id', 'team'],
      additionalProperties: false,
    },
    execute: ({ player_id, team }) => {
      executed.push(`set_team:${String(player_id)}:${String(team)}`);
      const player = players.get(player_id as string);
      if (player === undefined) throw new Error(`no player ${String(player_id)}`);
      player.team = team as string;
      return { ok: true };
    },
  });
  return { players, executed, lookupPlayer, setTeam, tools: [lookupPlayer, setTeam] };
}

export const call = (name: string, args: Record<string, string>): string =>
  `<${name}>${Object.entries(args)
    .map(([key, value]) => `<${key}>${value}</${key}>`)
    .join('')}</${name}>`;

export const action = (...calls: string[]): string => `<ACTION>${calls.join('')}</ACTION>`;
