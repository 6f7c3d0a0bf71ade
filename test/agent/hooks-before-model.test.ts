import { describe, expect, it } from 'vitest';
import type { BeforeModelContext, ChatMessage } from '../../src/index.js';
import { deferred, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

describe('onBeforeModel', () => {
  it('rewrites what the model is sent, while the run keeps its own history', async () => {
    const contexts: Omit<BeforeModelContext, 'signal'>[] = [];
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Ana.']);
    const { agent, events } = testAgent({
      provider,
      tools: rosterTools().tools,
      instructions: 'You are a referee.',
      onBeforeModel: (messages, { signal, ...context }) => {
        contexts.push(context);
        expect(signal).toBeInstanceOf(AbortSignal);
        // Keep the system prompt and the last message only, and say what day it is.
        return [messages[0]!, { role: 'user', content: 'Today is Tuesday.' }, messages.at(-1)!];
      },
    });
    const result = await agent.run('Who is 7?');
    expect(result.text).toBe('Ana.');
    expect(contexts).toEqual([
      { agent: 'tester', round: 1, nudge: false },
      { agent: 'tester', round: 2, nudge: false },
    ]);
    const [first, second] = provider.requests;
    expect(first!.messages.map((message) => message.content.slice(0, 18))).toEqual(['You are a referee.', 'Today is Tuesday.', 'Who is 7?']);
    // The second request was cut from the full history: the first rewrite was never kept.
    expect(second!.messages).toHaveLength(3);
    expect(second!.messages[1]!.content).toBe('Today is Tuesday.');
    expect(second!.messages[2]!.content).toMatch(/^<OBSERVATION>/);
    expect(events.all.filter((event) => event.type === 'llm.request').map((event) => (event.data as { messageCount: number }).messageCount)).toEqual([3, 3]);
  });

  it('gets a copy: changing it in place and returning nothing sends the history unchanged', async () => {
    const provider = scriptedProvider(['Hello.']);
    const { agent } = testAgent({
      provider,
      onBeforeModel: (messages) => {
        messages[0]!.content = 'HACKED';
        messages.push({ role: 'user', content: 'extra' });
        return undefined;
      },
    });
    await agent.run('hi');
    expect(provider.requests[0]!.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('may be async', async () => {
    const provider = scriptedProvider(['Hello.']);
    const { agent } = testAgent({
      provider,
      onBeforeModel: async (messages): Promise<ChatMessage[]> => [{ role: 'system', content: 'Be brief.' }, ...messages],
    });
    await expect(agent.run('hi')).resolves.toMatchObject({ reason: 'final_answer', text: 'Hello.' });
    expect(provider.requests[0]!.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });

  it('is told when the deliberation is the final-answer nudge', async () => {
    const nudges: boolean[] = [];
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Ana.']);
    const { agent } = testAgent({ provider, tools: rosterTools().tools, maxRounds: 1, onBeforeModel: (_, { nudge }) => void nudges.push(nudge) });
    await agent.run('go');
    expect(nudges).toEqual([false, true]);
  });

  it.each([
    ['throws', () => {
      throw new Error('summariser down');
    }, /onBeforeModel failed: summariser down/],
    ['rejects', () => Promise.reject(new Error('summariser down')), /onBeforeModel failed: summariser down/],
    ['returns something else', () => 'hello' as unknown as ChatMessage[], /onBeforeModel failed: .*array of messages/],
    ['returns a bad message', () => [{ role: 'robot', content: 'x' }] as unknown as ChatMessage[], /onBeforeModel failed: message 0/],
    ['returns no messages', () => [], /onBeforeModel failed: it returned no messages/],
    ['returns a tool message without its call', () => [{ role: 'tool', content: 'x' }] as unknown as ChatMessage[], /onBeforeModel failed: message 0 is a tool message/],
  ])('fails the run clearly when it %s, before the model is asked', async (_, hook, message) => {
    const provider = scriptedProvider(['never sent']);
    const { agent, events } = testAgent({ provider, onBeforeModel: hook });
    const result = await agent.run('hi');
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(message);
    expect(provider.requests).toHaveLength(0);
    expect(events.find('agent.finished')!.data.error).toMatch(message);
  });

  it('ends an aborted run without asking the model, whatever the hook answers later', async () => {
    const gate = deferred<ChatMessage[] | undefined>();
    const provider = scriptedProvider(['never sent']);
    const { agent } = testAgent({ provider, onBeforeModel: () => gate.promise });
    const running = agent.run('hi');
    agent.abort('stop');
    const result = await running;
    gate.resolve(undefined);
    await gate.promise;
    expect(result.reason).toBe('aborted');
    expect(provider.requests).toHaveLength(0);
  });

  it('is checked by createAgent', async () => {
    const { createAgent } = await import('../../src/index.js');
    expect(() => createAgent({ name: 'a', provider: scriptedProvider([]), onBeforeModel: 'trim' as never })).toThrow(/onBeforeModel must be a function/);
    expect(() => createAgent({ name: 'a', provider: scriptedProvider([]), repair: {} as never })).toThrow(/repair must be a function/);
  });
});
