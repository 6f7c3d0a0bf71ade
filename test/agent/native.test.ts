import { describe, expect, it } from 'vitest';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { rosterTools } from './fixtures.js';

describe('protocol: native', () => {
  it('runs native calls through validate → dispatch → observe with one tool message per call', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([
      {
        text: 'Checking both.',
        toolCalls: [
          { id: 'call_a', name: 'lookup_player', arguments: '{"player_id":"7"}' },
          { id: 'call_b', name: 'lookup_player', arguments: '{"player_id":"9"}' },
        ],
      },
      'Ana and Bo.',
    ]);
    const { agent, events } = testAgent({ provider, tools, protocol: 'native' });
    const result = await agent.run('Who are 7 and 9?');
    expect(result.text).toBe('Ana and Bo.');
    expect(executed.sort()).toEqual(['lookup_player:7', 'lookup_player:9']);
    expect(events.find('action.parsed')!.data.calls.map((item) => item.callId)).toEqual(['call_a', 'call_b']);
    const messages = provider.requests[1]!.messages;
    expect(messages.at(-3)).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'call_a' }, { id: 'call_b' }] });
    expect(messages.at(-2)).toMatchObject({ role: 'tool', callId: 'call_a' });
    expect(messages.at(-1)).toMatchObject({ role: 'tool', callId: 'call_b' });
    expect(messages.at(-1)!.content).toContain('Bo');
  });

  it('reports broken JSON arguments as invalid_arguments and never scans text for <ACTION>', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([
      {
        text: '<ACTION><set_team><player_id>7</player_id><team>blue</team></set_team></ACTION>',
        toolCalls: [{ id: 'c1', name: 'lookup_player', arguments: '{"player_id": "7"' }],
      },
      'Sorry.',
    ]);
    const { agent, events } = testAgent({ provider, tools, protocol: 'native' });
    await agent.run('go');
    expect(events.find('tool.rejected')!.data).toMatchObject({
      code: 'invalid_arguments',
      category: 'invalid_arguments_json',
    });
    expect(executed).toEqual([]);
    // Every native call still gets its tool message.
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'c1' });
  });

  it('rejects duplicate call ids as malformed', async () => {
    const { tools } = rosterTools();
    const duplicate = { id: 'same', name: 'lookup_player', arguments: '{"player_id":"7"}' };
    const provider = scriptedProvider([{ toolCalls: [duplicate, duplicate] }, 'ok']);
    const { agent, events } = testAgent({ provider, tools, protocol: 'native' });
    await agent.run('go');
    expect(events.find('action.malformed')!.data.code).toBe('duplicate_call_id');
  });
});
