import { describe, expect, it } from 'vitest';
import { defineSkill, type StepResult } from '../../src/index.js';
import { renderManifest } from '../../src/protocol/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, teamTools, toolTrace } from './fixtures.js';

const playerParameters = {
  type: 'object',
  properties: { id: { type: 'string', maxLength: 16 } },
  required: ['id'],
  additionalProperties: false,
} as const;

function scoutSkill() {
  const team = teamTools();
  const scout = defineSkill({
    name: 'scout_player',
    description: 'Look a player up, then list their team.',
    parameters: playerParameters,
    tools: [team.lookupPlayer, team.listTeam],
    run: async ({ id }, steps) => {
      const player = await steps.call<{ name: string; team: string }>('lookup_player', { player_id: id });
      const teammates = await steps.call<string[]>('list_team', { team: player.team });
      return { player: player.name, teammates };
    },
  });
  return { ...team, scout };
}

describe('workflow skills', () => {
  it('chains two tools, passing data between them, as nested calls on the bus', async () => {
    const { scout, executed } = scoutSkill();
    const provider = scriptedProvider([action(call('scout_player', { id: '7' })), 'Ana plays for red with Cy.']);
    const { agent, events } = testAgent({ provider, tools: [scout] });
    const result = await agent.run('Scout player 7.');

    expect(result.reason).toBe('final_answer');
    expect(toolTrace(events)).toEqual([
      'tool.started:tester/1.1.1:scout_player',
      'tool.started:tester/1.1.1/1:lookup_player',
      'tool.completed:tester/1.1.1/1:lookup_player',
      'tool.started:tester/1.1.1/2:list_team',
      'tool.completed:tester/1.1.1/2:list_team',
      'tool.completed:tester/1.1.1:scout_player',
    ]);
    // The second step got the first one's output; AJV filled in list_team's default limit.
    expect(executed).toEqual(['lookup_player:7', 'list_team:red:10']);
    const completed = events.filter('tool.completed');
    expect(completed[1]!.data).toMatchObject({ args: { team: 'red', limit: 10 }, output: ['Ana', 'Cy'] });
    expect(completed.at(-1)!.data.output).toEqual({ player: 'Ana', teammates: ['Ana', 'Cy'] });
    expect(events.find('agent.observation')!.data.text).toContain('teammates');
    // Only the model's call counts as the run's call.
    expect(result.calls.map((record) => record.callId)).toEqual(['tester/1.1.1']);
    provider.assertConsumed();
  });

  it('publishes nested events as the parent agent, caused by the skill call’s tool.started', async () => {
    const { scout } = scoutSkill();
    const provider = scriptedProvider([action(call('scout_player', { id: '9' })), 'Done.']);
    const { agent, events } = testAgent({ provider, tools: [scout] });
    await agent.run('Scout player 9.');

    const [skillStarted, ...nested] = events.filter('tool.started');
    expect(nested).toHaveLength(2);
    for (const event of nested) {
      expect(event.agent).toBe('tester');
      expect(event.cause).toBe(skillStarted!.id);
    }
    const nestedEnds = events.filter('tool.completed').filter((event) => event.data.callId !== 'tester/1.1.1');
    expect(nestedEnds.every((event) => event.cause === skillStarted!.id)).toBe(true);
  });

  it('is an ordinary tool: listed in the manifest with its parameters, its arguments validated', async () => {
    const { scout, executed } = scoutSkill();
    expect(scout.kind).toBe('tool');
    expect(renderManifest([scout])).toContain('scout_player');
    const provider = scriptedProvider([action(call('scout_player', { ident: '7' })), 'Sorry.']);
    const { agent, events } = testAgent({ provider, tools: [scout] });
    await agent.run('Scout player 7.');
    expect(provider.requests[0]!.messages[0]!.content).toContain('scout_player');
    expect(events.find('tool.rejected')!.data.code).toBe('invalid_arguments');
    expect(events.find('tool.started')).toBeUndefined();
    expect(executed).toEqual([]);
  });

  it('runs declared steps in order, each given the input and the previous output', async () => {
    const { lookupPlayer, listTeam } = teamTools();
    const teamOf = defineSkill({
      name: 'team_of',
      description: 'The team of a player.',
      parameters: playerParameters,
      tools: [lookupPlayer, listTeam],
      steps: [
        { tool: 'lookup_player', args: (input) => ({ player_id: input['id'] }) },
        { tool: 'list_team', args: (_input, previous) => ({ team: (previous as { team: string }).team, limit: 2 }) },
      ],
    });
    const provider = scriptedProvider([action(call('team_of', { id: '8' })), 'Red.']);
    const { agent, events } = testAgent({ provider, tools: [teamOf] });
    await agent.run('Which team is 8 in?');
    expect(toolTrace(events)).toEqual([
      'tool.started:tester/1.1.1:team_of',
      'tool.started:tester/1.1.1/1:lookup_player',
      'tool.completed:tester/1.1.1/1:lookup_player',
      'tool.started:tester/1.1.1/2:list_team',
      'tool.completed:tester/1.1.1/2:list_team',
      'tool.completed:tester/1.1.1:team_of',
    ]);
    expect(events.filter('tool.completed').at(-1)!.data.output).toEqual(['Ana', 'Cy']);
  });

  it('reports a failed step as a result through tryCall, so a workflow can fall back', async () => {
    const { lookupPlayer, listTeam } = teamTools();
    const seen: StepResult[] = [];
    const lookupOrBench = defineSkill({
      name: 'lookup_or_bench',
      description: 'Find a player, or list the blue team when there is none.',
      parameters: playerParameters,
      tools: [lookupPlayer, listTeam],
      run: async ({ id }, steps) => {
        const found = await steps.tryCall('lookup_player', { player_id: id });
        seen.push(found);
        if (found.status === 'completed') return found.output;
        return steps.call('list_team', { team: 'blue' });
      },
    });
    const provider = scriptedProvider([action(call('lookup_or_bench', { id: '42' })), 'Bo is on the bench.']);
    const { agent, events } = testAgent({ provider, tools: [lookupOrBench] });
    await agent.run('Find 42.');
    expect(seen[0]).toMatchObject({ status: 'failed', callId: 'tester/1.1.1/1', error: { kind: 'execution', message: 'no player 42' } });
    expect(toolTrace(events)).toContain('tool.failed:tester/1.1.1/1:lookup_player');
    expect(events.filter('tool.completed').at(-1)!.data).toMatchObject({ callId: 'tester/1.1.1', output: ['Bo'] });
  });

  it('gives the steps the skill call’s agent, call id and signal', async () => {
    const { lookupPlayer } = teamTools();
    let seen: { agent: string; callId: string; attempt: number; aborted: boolean } | undefined;
    const whoAmI = defineSkill({
      name: 'who_am_i',
      description: 'Reports where it runs.',
      parameters: { type: 'object', properties: {} },
      tools: [lookupPlayer],
      run: (_args, steps) => {
        seen = { agent: steps.agent, callId: steps.callId, attempt: steps.attempt, aborted: steps.signal.aborted };
        return 'ok';
      },
    });
    const provider = scriptedProvider([action('<who_am_i></who_am_i>'), 'Fine.']);
    const { agent } = testAgent({ provider, tools: [whoAmI] });
    await agent.run('Who?');
    expect(seen).toEqual({ agent: 'tester', callId: 'tester/1.1.1', attempt: 1, aborted: false });
  });
});
