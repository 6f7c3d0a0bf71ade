import { describe, expect, it } from 'vitest';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

describe('the agent cycle', () => {
  it('goes deliberate → parse → validate → dispatch → observe and answers', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([
      `Looking up player 7.\n${action(call('lookup_player', { player_id: '7' }))}`,
      'Player 7 is Ana.',
    ]);
    const { agent, events } = testAgent({ provider, tools });

    const result = await agent.run('Who is player 7?');

    expect(result).toMatchObject({ reason: 'final_answer', text: 'Player 7 is Ana.', rounds: 2 });
    expect(result.calls).toEqual([
      expect.objectContaining({ name: 'lookup_player', outcome: 'completed', round: 1, attempts: 1 }),
    ]);
    expect(executed).toEqual(['lookup_player:7']);
    const states = events.filter('agent.state').map((event) => event.data.to);
    expect(states).toEqual([
      'deliberating', 'parsing', 'validating', 'dispatching', 'observing',
      'deliberating', 'parsing', 'done',
    ]);
    expect(events.types()).toEqual([
      'agent.spawned', 'run.started',
      'agent.state', 'llm.request', 'llm.response',
      'agent.state', 'agent.said',
      'agent.state', 'action.parsed',
      'agent.state', 'tool.started', 'tool.completed',
      'agent.state', 'agent.observation',
      'agent.state', 'llm.request', 'llm.response',
      'agent.state', 'agent.said',
      'agent.state', 'agent.finished',
    ]);
    expect(events.find('tool.completed')?.data.output).toEqual({ name: 'Ana', team: 'red' });
    expect(events.find('agent.said')?.data.text).toBe('Looking up player 7.');
    provider.assertConsumed();
  });

  it('answers directly when the model calls nothing', async () => {
    const provider = scriptedProvider(['Hello there.']);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    const result = await agent.run('hi');
    expect(result.reason).toBe('final_answer');
    expect(result.text).toBe('Hello there.');
    expect(events.find('agent.finished')?.data).toMatchObject({ reason: 'final_answer', rounds: 1 });
    expect(events.types()).not.toContain('tool.started');
  });

  it('chains causes: every run event but the first follows from an earlier one', async () => {
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '9' })), 'Bo.']);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    await agent.run('Who is 9?');
    const ids = new Set<string>();
    for (const event of events.all) {
      if (event.cause !== undefined) expect(ids.has(event.cause)).toBe(true);
      ids.add(event.id);
    }
    const started = events.find('tool.started')!;
    expect(started.cause).toBe(events.find('action.parsed')!.id);
  });

  it('puts the tool manifest and format rules in the system prompt', async () => {
    const provider = scriptedProvider(['ok']);
    const { agent } = testAgent({ provider, tools: rosterTools().tools, instructions: 'You referee.' });
    await agent.run('hi');
    const system = provider.requests[0]!.messages[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toMatch(/^You referee\./);
    expect(system.content).toContain('lookup_player');
    expect(system.content).toContain('player_id');
    expect(system.content).toContain('<ACTION>');
  });

  it('feeds the observation back, quoted in an OBSERVATION element', async () => {
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Ana.']);
    const { agent } = testAgent({ provider, tools: rosterTools().tools });
    await agent.run('Who is 7?');
    const second = provider.requests[1]!.messages;
    expect(second.at(-2)).toMatchObject({ role: 'assistant' });
    expect(second.at(-1)?.role).toBe('user');
    expect(second.at(-1)?.content).toMatch(/^<OBSERVATION>\n[\s\S]*lookup_player \([^)]+\) completed:\n\{"name":"Ana","team":"red"\}[\s\S]*<\/OBSERVATION>$/);
  });

  it('refuses a second concurrent run with a clear error and serves runs one after another', async () => {
    const provider = scriptedProvider(['one', 'two']);
    const { agent } = testAgent({ provider });
    const first = agent.run('a');
    await expect(agent.run('b')).rejects.toThrow(/already running/);
    await expect(first).resolves.toMatchObject({ text: 'one' });
    await expect(agent.run('c')).resolves.toMatchObject({ text: 'two' });
  });
});
