import { describe, expect, it } from 'vitest';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

describe('self-correction through observations', () => {
  it('turns a wrong parameter name into "did you mean" and recovers', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([
      action(call('lookup_player', { id: '7' })),
      action(call('lookup_player', { player_id: '7' })),
      'Player 7 is Ana.',
    ]);
    const { agent, events } = testAgent({ provider, tools });

    const result = await agent.run('Who is player 7?');

    expect(result.reason).toBe('final_answer');
    const rejected = events.find('tool.rejected')!;
    expect(rejected.data).toMatchObject({ name: 'lookup_player', code: 'invalid_arguments' });
    expect(rejected.data.message).toMatch(/player_id/);
    const observations = events.filter('agent.observation');
    expect(observations[0]!.data.ok).toBe(false);
    expect(observations[0]!.data.text).toMatch(/nothing ran/i);
    expect(observations[0]!.data.text).toMatch(/player_id/);
    // The rejected turn ran nothing; the corrected one ran once.
    expect(executed).toEqual(['lookup_player:7']);
    provider.assertConsumed();
  });

  it('suggests the nearest tool for an unknown one', async () => {
    const provider = scriptedProvider([
      action(call('lookup_playr', { player_id: '7' })),
      action(call('lookup_player', { player_id: '7' })),
      'Ana.',
    ]);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    await agent.run('Who is 7?');
    const rejected = events.find('tool.rejected')!;
    expect(rejected.data.code).toBe('unknown_tool');
    expect(rejected.data.suggestion).toBe('lookup_player');
    expect(events.find('agent.observation')!.data.text).toContain('lookup_player');
  });

  it('rejects a tool outside allowedTools as not_permitted, nothing runs', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'blue' })), 'I may not.']);
    const { agent, events } = testAgent({ provider, tools, allowedTools: ['lookup_player'] });
    await agent.run('Move 7 to blue.');
    expect(events.find('tool.rejected')!.data).toMatchObject({ code: 'not_permitted', name: 'set_team' });
    expect(executed).toEqual([]);
    // The manifest offers only what the agent may call.
    expect(provider.requests[0]!.messages[0]!.content).not.toContain('set_team');
  });

  it('one invalid call rejects the whole block: nothing of it runs', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([
      action(call('lookup_player', { player_id: '7' }), call('set_team', { player_id: '7', team: 'green' })),
      'Sorry.',
    ]);
    const { agent, events } = testAgent({ provider, tools });
    await agent.run('go');
    expect(events.find('tool.rejected')!.data.message).toMatch(/red|blue/);
    expect(events.types()).not.toContain('tool.started');
    expect(executed).toEqual([]);
  });

  it('reports a malformed block and lets the model fix it', async () => {
    const provider = scriptedProvider([
      '<ACTION><lookup_player><player_id>7</player_id></lookup_player>',
      action(call('lookup_player', { player_id: '7' })),
      'Ana.',
    ]);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('final_answer');
    expect(events.find('action.malformed')!.data.code).toBe('unclosed_action');
    expect(events.find('agent.observation')!.data.text).toMatch(/unclosed_action/);
  });

  it('stops after maxCorrections identical invalid rounds, quoting the last issue', async () => {
    const bad = action(call('lookup_player', { id: '7' }));
    const provider = scriptedProvider([bad, bad, bad, 'never requested']);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(/3 invalid rounds/);
    expect(result.error).toMatch(/player_id|id/);
    expect(result.issues?.[0]?.category).toBeDefined();
    expect(provider.remaining).toBe(1);
    expect(events.filter('tool.rejected')).toHaveLength(3);
    expect(events.find('agent.finished')!.data).toMatchObject({ reason: 'error', rounds: 3 });
    expect(events.filter('agent.state').at(-1)!.data.to).toBe('failed');
  });

  it('counts an output cut off by length inside a block as a correction (unclosed_action)', async () => {
    const provider = scriptedProvider([
      { text: '<ACTION><lookup_player><player_id>7</player_id></lookup_player></ACTION>', finishReason: 'length' },
      'Ana.',
    ]);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    await agent.run('Who is 7?');
    // A complete-looking block that ended by `length` is fine; the parser decides by the closer.
    expect(events.types()).toContain('tool.started');
  });

  it('never runs a block cut off by length', async () => {
    const provider = scriptedProvider([
      { text: 'Sure.<ACTION><lookup_player><player_id>7</player', finishReason: 'length' },
      'Ana.',
    ]);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    await agent.run('Who is 7?');
    expect(events.find('action.malformed')!.data.code).toBe('unclosed_action');
    expect(events.types()).not.toContain('tool.started');
  });

  it('answers an empty completion with an observation and a retry', async () => {
    const provider = scriptedProvider(['', 'Here I am.']);
    const { agent, events } = testAgent({ provider });
    const result = await agent.run('hi');
    expect(result).toMatchObject({ reason: 'final_answer', text: 'Here I am.' });
    expect(events.find('agent.observation')!.data.text).toMatch(/empty/);
  });

  it('treats a content-filter stop as the final answer', async () => {
    const provider = scriptedProvider([{ text: 'I cannot help with that.', finishReason: 'content_filter' }]);
    const { agent } = testAgent({ provider });
    await expect(agent.run('hi')).resolves.toMatchObject({ reason: 'final_answer', text: 'I cannot help with that.' });
  });
});
