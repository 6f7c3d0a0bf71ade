import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { createBus, defineSkill, defineTool } from '../../src/index.js';
import { sequentialIds, recordEvents, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { createToolLimiters, dispatchCalls } from '../../src/tools/index.js';
import { action, call, teamTools, toolTrace } from './fixtures.js';

// A deadlock shows up as a test that never ends: the timeout turns it into a failure.
const NO_HANG = { timeout: 5_000 };

async function flush(rounds = 5): Promise<void> {
  for (let index = 0; index < rounds; index++) await Promise.resolve();
}

function rosterSkill(name = 'scout_player') {
  const team = teamTools();
  const skill = defineSkill({
    name,
    description: 'Look a player up, then list their team.',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    readOnly: true,
    tools: [team.lookupPlayer, team.listTeam],
    run: async ({ id }, steps) => {
      const player = await steps.call<{ team: string }>('lookup_player', { player_id: id });
      return steps.call('list_team', { team: player.team });
    },
  });
  return { ...team, skill };
}

/** A read-only async tool with a per-tool limit, measuring how many of its calls overlap. */
function countedTool(concurrency: number) {
  const state = { running: 0, highWater: 0, order: [] as string[] };
  const tool = defineTool({
    name: 'score',
    description: 'Scores a player slowly.',
    parameters: { type: 'object', properties: { who: { type: 'string' } } },
    readOnly: true,
    concurrency,
    execute: async ({ who }) => {
      state.running++;
      state.highWater = Math.max(state.highWater, state.running);
      state.order.push(`start:${String(who)}`);
      await flush();
      state.order.push(`end:${String(who)}`);
      state.running--;
      return 1;
    },
  });
  return { tool, state };
}

describe('skills under limits', () => {
  it('completes with an agent concurrency of 1: nested calls never wait for the slot the skill holds', NO_HANG, async () => {
    const { skill, executed } = rosterSkill();
    const provider = scriptedProvider([action(call('scout_player', { id: '7' })), 'Red.']);
    const { agent } = testAgent({ provider, tools: [skill], concurrency: 1 });
    const result = await agent.run('Scout 7.');
    expect(result.reason).toBe('final_answer');
    expect(executed).toEqual(['lookup_player:7', 'list_team:red:10']);
  });

  it('completes with a shared global limiter of 1 and two skill calls in one turn', NO_HANG, async () => {
    const { skill } = rosterSkill();
    const limiter = pLimit({ concurrency: 1, rejectOnClear: true });
    const provider = scriptedProvider([action(call('scout_player', { id: '7' }), call('scout_player', { id: '9' })), 'Done.']);
    const { agent, events } = testAgent({ provider, tools: [skill], limiter });
    const result = await agent.run('Scout 7 and 9.');
    expect(result.reason).toBe('final_answer');
    expect(events.filter('tool.completed').map((event) => event.data.callId)).toEqual([
      'tester/1.1.1/1',
      'tester/1.1.1/2',
      'tester/1.1.1',
      'tester/1.1.2/1',
      'tester/1.1.2/2',
      'tester/1.1.2',
    ]);
    expect(limiter.activeCount).toBe(0);
    expect(limiter.pendingCount).toBe(0);
  });

  it('holds per-tool limits across nested calls and the calls of the turn', NO_HANG, async () => {
    const { tool, state } = countedTool(1);
    const scoreTwice = defineSkill({
      name: 'score_twice',
      description: 'Scores two players.',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      tools: [tool],
      run: async (_args, steps) => Promise.all([steps.call('score', { who: 'nested-a' }), steps.call('score', { who: 'nested-b' })]),
    });
    const bus = createBus({ ids: sequentialIds() });
    const events = recordEvents(bus);
    const toolLimiters = createToolLimiters();
    const calls = [
      { call: { callId: 'c1', name: 'score', args: { who: 'model' } }, tool },
      { call: { callId: 'c2', name: 'score_twice', args: {} }, tool: scoreTwice },
    ];
    const results = await dispatchCalls(calls, {
      signal: new AbortController().signal,
      agent: 'tester',
      bus,
      publish: (type, data) => bus.publish(type, data, { agent: 'tester' }),
      limiter: pLimit({ concurrency: 1, rejectOnClear: true }),
      toolLimiters,
    });
    expect(results.map((result) => result.status)).toEqual(['completed', 'completed']);
    expect(state.highWater).toBe(1);
    expect(state.order.filter((entry) => entry.startsWith('start:'))).toEqual(['start:model', 'start:nested-a', 'start:nested-b']);
    // The nested calls took their slots from the map the host shared.
    expect(toolLimiters.get('score')?.concurrency).toBe(1);
    expect(toolTrace(events).filter((line) => line.includes('c2/'))).toHaveLength(4);
  });
});
