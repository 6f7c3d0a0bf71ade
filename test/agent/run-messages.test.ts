import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool, resumeAgent, TroupeError, type RunMessage } from '../../src/index.js';
import { createSessionLog } from '../../src/record/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call } from './fixtures.js';

const conversation: RunMessage[] = [
  { role: 'system', content: 'Answer in one word.' },
  { role: 'user', content: 'Capital of France?' },
  { role: 'assistant', content: 'Paris.' },
  { role: 'user', content: 'And of Spain?' },
];

describe('a message list as input', () => {
  it('sends the list after the system prompt, and announces it', async () => {
    const provider = scriptedProvider(['Madrid.']);
    const { agent, events } = testAgent({ provider, instructions: 'You are terse.' });
    const result = await agent.run(conversation);
    expect(result.text).toBe('Madrid.');
    const sent = provider.requests[0]!.messages;
    expect(sent[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You are terse.') });
    expect(sent.slice(1)).toEqual(conversation);
    expect(events.find('run.started')!.data).toEqual({ input: 'And of Spain?', number: 1, messages: conversation.slice(0, 3) });
  });

  it('streams a list too, and copies it: changing it later changes nothing', async () => {
    const provider = scriptedProvider(['Madrid.']);
    const { agent } = testAgent({ provider });
    const list = conversation.map((message) => ({ ...message }));
    const stream = agent.stream(list);
    list[3]!.content = 'changed';
    expect((await stream.result).text).toBe('Madrid.');
    expect(provider.requests[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'And of Spain?' });
  });

  it('takes a list of one user message like a string', async () => {
    const provider = scriptedProvider(['Hi.']);
    const { agent } = testAgent({ provider, memory: true });
    await agent.run([{ role: 'user', content: 'hello' }]);
    expect(provider.requests[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'hello' });
  });

  it.each([
    [42, /takes a string or a list of messages, got number/],
    [[], /the list of messages is empty/],
    [[{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }], /last message must be the user's, got role "assistant" at index 1/],
    [[{ role: 'tool', content: 'a' }], /message 0 has role "tool"; a message's role is "system", "user" or "assistant"/],
    [[{ role: 'user' }], /message 0 \(user\) must have string content, got undefined/],
    [['hello'], /message 0 must be an object \{ role, content \}, got "hello"/],
    [[null], /message 0 must be an object/],
  ])('rejects %j with a clear error', async (input, message) => {
    const { agent } = testAgent({ provider: scriptedProvider([]) });
    const error = await agent.run(input as never).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(TroupeError);
    expect((error as TroupeError).code).toBe('invalid_config');
    expect((error as Error).message).toMatch(message);
    // The agent is left free.
    expect(agent.state).toBe('idle');
  });

  it('refuses earlier messages when the agent keeps its own conversation (memory)', async () => {
    const { agent } = testAgent({ provider: scriptedProvider([]), memory: true });
    await expect(agent.run(conversation)).rejects.toThrow(/has `memory`/);
  });

  it('resumes a logged run whose input was a list, with the whole conversation', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'troupe-messages-')), 'run.jsonl');
    const hang = defineTool({ name: 'hang', description: 'Never ends.', parameters: { type: 'object', properties: {} }, execute: () => new Promise(() => {}) });
    const session = createSessionLog(log);
    const first = testAgent({ name: 'asker', tools: [hang], provider: scriptedProvider([action(call('hang', {}))]), log: session });
    const started = new Promise((resolve) => first.agent.bus.once('tool.started', resolve));
    void first.agent.run(conversation);
    await started;
    session.closeSync(); // the process dies with the call running

    const provider = scriptedProvider(['Madrid.']);
    const resumed = await resumeAgent(log, { name: 'asker', tools: [hang], provider });
    await resumed.log.close();
    expect(resumed.result.text).toBe('Madrid.');
    expect(provider.requests[0]!.messages.slice(1, 5)).toEqual(conversation);
  });
});
