import { describe, expect, it } from 'vitest';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

describe('maxRounds and the final-answer nudge', () => {
  it('after maxRounds, makes one deliberation without tools and ends with max_rounds', async () => {
    const { tools, executed } = rosterTools();
    const lookup = action(call('lookup_player', { player_id: '7' }));
    const provider = scriptedProvider([lookup, lookup, `Still looking. ${lookup}`]);
    const { agent, events } = testAgent({ provider, tools, maxRounds: 2 });

    const result = await agent.run('Who is 7?');

    expect(result.reason).toBe('max_rounds');
    expect(result.text).toBe('Still looking.');
    expect(executed).toEqual(['lookup_player:7', 'lookup_player:7']);
    const requests = events.filter('llm.request');
    expect(requests.map((event) => event.data.nudge)).toEqual([false, false, true]);
    const nudge = provider.requests[2]!;
    expect(nudge.messages.at(-1)?.content).toMatch(/final answer/);
    expect(nudge.stop).toBeUndefined();
    // The block in the nudged answer never runs.
    expect(events.filter('tool.started')).toHaveLength(2);
    provider.assertConsumed();
  });

  it('the nudge declares the native tools but forbids calling them', async () => {
    const { tools } = rosterTools();
    const nativeCall = { id: 'c1', name: 'lookup_player', arguments: '{"player_id":"7"}' };
    const provider = scriptedProvider([{ toolCalls: [nativeCall] }, { text: 'Ana.' }]);
    const { agent } = testAgent({ provider, tools, protocol: 'native', maxRounds: 1 });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('max_rounds');
    expect(provider.requests[0]!.tools?.map((tool) => tool.name)).toEqual(['lookup_player', 'set_team']);
    expect(provider.requests[0]!.toolChoice).toBe('auto');
    expect(provider.requests[1]!.tools?.map((tool) => tool.name)).toEqual(['lookup_player', 'set_team']);
    expect(provider.requests[1]!.toolChoice).toBe('none');
  });
});
