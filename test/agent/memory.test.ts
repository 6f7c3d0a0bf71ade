import { describe, expect, it } from 'vitest';
import { ConfigError, createScene, defineTool, type ChatMessage, type ModelRequest } from '../../src/index.js';
import { countMessageTokens, countTokens, encodingFor } from '../../src/agent/memory/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

/** The messages of a request after the system prompt, as role: content lines. */
const transcript = (request: ModelRequest): string[] =>
  request.messages.filter((message) => message.role !== 'system').map((message) => `${message.role}: ${message.content}`);

describe('conversation memory', () => {
  it('keeps the history between runs when memory is on', async () => {
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Player 7 is Ana.', 'She plays for red.']);
    const { agent } = testAgent({ provider, tools: rosterTools().tools, instructions: 'You referee.', memory: true });

    await agent.run('Who is player 7?');
    const second = await agent.run('Which team?');

    expect(second.text).toBe('She plays for red.');
    const sent = provider.requests[2]!;
    expect(sent.messages[0]!.role).toBe('system');
    const lines = transcript(sent);
    expect(lines[0]).toBe('user: Who is player 7?');
    expect(lines[1]).toContain('<ACTION><lookup_player>');
    expect(lines[2]).toMatch(/^user: <OBSERVATION>\nlookup_player \(tester\/1\.1\.1\) completed/);
    expect(lines.slice(3)).toEqual(['assistant: Player 7 is Ana.', 'user: Which team?']);
    expect(agent.memory!.turns()).toHaveLength(2);
    expect(agent.memory!.messages().at(-1)).toEqual({ role: 'assistant', content: 'She plays for red.' });
    provider.assertConsumed();
  });

  it('answers queries by role and by range', async () => {
    const provider = scriptedProvider(['Ana.', 'Red.', 'Seven.']);
    const { agent } = testAgent({ provider, memory: true });
    for (const question of ['Who?', 'Which team?', 'What number?']) await agent.run(question);
    const memory = agent.memory!;
    const text = (messages: readonly ChatMessage[]) => messages.map((message) => message.content);
    expect(text(memory.messages({ role: 'user' }))).toEqual(['Who?', 'Which team?', 'What number?']);
    expect(text(memory.messages({ role: 'assistant', last: 2 }))).toEqual(['Red.', 'Seven.']);
    expect(text(memory.messages({ role: ['user', 'assistant'], from: 1, to: 3 }))).toEqual(['Ana.', 'Which team?']);
    expect(text(memory.messages({ from: -2 }))).toEqual(['What number?', 'Seven.']);
    expect(memory.messages({ last: 0 })).toEqual([]);
    expect(memory.messages({})).toEqual(memory.messages());
    expect([memory.messageCount(), memory.messageCount('user'), memory.messageCount(['tool'])]).toEqual([6, 3, 0]);
    expect(() => memory.messages({ role: 'narrator' as never })).toThrow(new ConfigError('memory.messages: unknown role "narrator" (roles: system, user, assistant, tool)'));
    expect(() => memory.messages({ last: 2, from: 1 })).toThrow(/either last or a range/);
    expect(() => memory.messages({ last: -1 })).toThrow(/last must be a whole number from 0, got -1/);
    expect(() => memory.messages({ from: 1.5 })).toThrow(/from must be a whole number/);
  });

  it('leaves runs independent without the memory option, exactly as before', async () => {
    const provider = scriptedProvider(['One.', 'Two.']);
    const { agent, events } = testAgent({ provider, instructions: 'Count.' });
    await agent.run('first');
    await agent.run('second');
    expect(agent.memory).toBeUndefined();
    expect(provider.requests[1]!.messages).toEqual([
      { role: 'system', content: 'Count.' },
      { role: 'user', content: 'second' },
    ]);
    expect(events.types().filter((type) => type.startsWith('memory.'))).toEqual([]);
  });

  it('publishes the same events with memory as without, while under budget', async () => {
    const script = () => scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Ana.', 'Red.']);
    const plain = testAgent({ provider: script(), tools: rosterTools().tools });
    const remembering = testAgent({ provider: script(), tools: rosterTools().tools, memory: true });
    for (const { agent } of [plain, remembering]) {
      await agent.run('Who is 7?');
      await agent.run('Team?');
    }
    expect(remembering.events.types()).toEqual(plain.events.types());
    // Only the message counts differ: the second run carries the first.
    const counts = (record: typeof plain) => record.events.filter('llm.request').map((event) => event.data.messageCount);
    expect(counts(plain)).toEqual([2, 4, 2]);
    expect(counts(remembering)).toEqual([2, 4, 6]);
  });

  it('counts the kept history with the tokenizer and clears it', async () => {
    const provider = scriptedProvider(['Hello, Ana.', 'Again?']);
    const { agent } = testAgent({ provider, memory: { maxTokens: 1_000 } });
    await agent.run('Hi, I am Ana.');
    const memory = agent.memory!;
    const expected: ChatMessage[] = [
      { role: 'user', content: 'Hi, I am Ana.' },
      { role: 'assistant', content: 'Hello, Ana.' },
    ];
    expect(memory.messages()).toEqual(expected);
    expect(memory.tokens()).toBe(countMessageTokens(expected, (text) => countTokens(text, 'cl100k_base')));
    expect(memory.tokens()).toBe(memory.countTokens(expected));
    memory.clear();
    expect(memory.tokens()).toBe(0);
    await agent.run('Who am I?');
    expect(transcript(provider.requests[1]!)).toEqual(['user: Who am I?']);
  });

  it('keeps nothing of a run the model never answered', async () => {
    const provider = scriptedProvider(['Fine.']);
    const { agent } = testAgent({ provider, memory: true });
    const controller = new AbortController();
    controller.abort();
    const aborted = await agent.run('lost', { signal: controller.signal });
    expect(aborted.reason).toBe('aborted');
    expect(agent.memory!.turns()).toEqual([]);
    await agent.run('kept');
    expect(transcript(provider.requests[0]!)).toEqual(['user: kept']);
  });

  it('answers a native call cut off by an abort with a tool message, so the history stays valid and says the call was made', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Takes its time.',
      parameters: { type: 'object', properties: {} },
      execute: (_args, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    const provider = scriptedProvider([{ toolCalls: [{ id: 'c1', name: 'slow', arguments: '{}' }] }, 'Done.']);
    const { agent } = testAgent({ provider, tools: [slow], protocol: 'native', memory: true });
    agent.bus.on('tool.started', () => agent.abort('stop'));
    await agent.run('go');
    // The call started (it may have had effects): memory keeps it, answered by a note, never unanswered.
    const kept = agent.memory!.messages();
    expect(kept.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(kept[2]).toMatchObject({ role: 'tool', callId: 'c1', content: expect.stringMatching(/aborted before these results were read.*slow \(c1\): aborted/) });
    await agent.run('again');
    expect(provider.requests[1]!.messages.slice(1)).toEqual([...kept, { role: 'user', content: 'again' }]);
  });

  it('rejects memory options that cannot work', () => {
    const provider = scriptedProvider([]);
    expect(() => testAgent({ provider, memory: { maxTokens: 0 } })).toThrow(ConfigError);
    expect(() => testAgent({ provider, memory: { history: 'short' as 'full' } })).toThrow(/memory.history/);
    expect(() => testAgent({ provider, memory: { compaction: {} as never } })).toThrow(/memory.compaction/);
    expect(() => testAgent({ provider, memory: { variables: { maxCount: -1 } } })).toThrow(/maxCount/);
    const clash = defineTool({ name: 'read_var', description: 'Mine.', parameters: { type: 'object', properties: {} }, execute: () => 1 });
    expect(() => testAgent({ provider, tools: [clash], memory: { history: 'compact' } })).toThrow(/read_var/);
  });
});

describe('token counts per provider family', () => {
  it.each([
    ['openai', 'gpt-4o-mini', 'o200k_base'],
    ['openai', 'gpt-4.1', 'o200k_base'],
    ['openai', 'gpt-5-mini', 'o200k_base'],
    ['openai', 'o3-mini', 'o200k_base'],
    ['openai', 'gpt-4-turbo', 'cl100k_base'],
    ['openai', 'gpt-3.5-turbo', 'cl100k_base'],
    ['anthropic', 'claude-sonnet-4-5', 'cl100k_base'],
    ['gemini', 'gemini-2.5-flash', 'cl100k_base'],
    ['ollama', 'llama3.2', 'cl100k_base'],
    ['scripted', undefined, 'cl100k_base'],
  ] as const)('%s %s counts with %s', (name, model, encoding) => {
    expect(encodingFor({ name, ...(model !== undefined && { model }) })).toBe(encoding);
  });

  it('chooses the agent counter by its provider model, and counts differently per encoding', async () => {
    const text = 'Ünïcode — 日本語のテキスト and some code: const x = await fetch(url);';
    expect(countTokens(text, 'o200k_base')).not.toBe(countTokens(text, 'cl100k_base'));
    const provider = scriptedProvider(['ok'], { name: 'openai', model: 'gpt-4o' });
    const { agent } = testAgent({ provider, memory: true });
    expect(agent.memory!.encoding).toBe('o200k_base');
    expect(agent.memory!.countTokens(text)).toBe(countTokens(text, 'o200k_base'));
  });

  it('takes a custom counter', async () => {
    const provider = scriptedProvider(['four words right here']);
    const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
    const { agent } = testAgent({ provider, memory: { countTokens: words } });
    await agent.run('two words');
    expect(agent.memory!.encoding).toBeUndefined();
    // Two messages of 4 overhead tokens each, plus 2 + 4 words.
    expect(agent.memory!.tokens()).toBe(14);
  });

  it('counts special-token text in a result as text', () => {
    expect(countTokens('before <|endoftext|> after')).toBeGreaterThan(3);
  });
});

describe('memory across scene turns', () => {
  it('carries an agent’s conversation from one turn to the next', async () => {
    const seen: ModelRequest[] = [];
    const provider = scriptedProvider((request) => {
      seen.push({ ...request, messages: [...request.messages] });
      return `<ACTION><say><text>turn ${seen.length}</text></say></ACTION>`;
    });
    const scene = createScene({ name: 'hall', seed: 1 });
    const ana = scene.add({ name: 'ana', provider, instructions: 'You are Ana.', triggers: [{ every: 1, offset: 1 }], memory: true });
    await scene.start();
    await scene.step();
    await scene.step();
    await scene.step();
    await scene.stop();
    expect(seen).toHaveLength(3);
    const third = seen[2]!.messages.filter((message) => message.role !== 'system');
    // Two earlier turns (perception, action, observation each), then this turn's perception.
    expect(third).toHaveLength(7);
    expect(third[1]!.content).toContain('turn 1');
    expect(third[4]!.content).toContain('turn 2');
    expect(third[6]!.content).toMatch(/^Tick 3\./);
    // The last observation is in the history already: the perception does not repeat it.
    expect(third[6]!.content).not.toContain('The result of your last action');
    expect(third[5]!.content).toMatch(/^<OBSERVATION>/);
    expect(ana.agent.memory!.turns()).toHaveLength(3);
  });

  it('leaves scene agents without memory as they were: one turn, one perception', async () => {
    const seen: number[] = [];
    const provider = scriptedProvider((request) => {
      seen.push(request.messages.length);
      return 'Nothing to do.';
    });
    const scene = createScene({ name: 'hall', seed: 1 });
    scene.add({ name: 'bo', provider, instructions: 'You are Bo.', triggers: [{ every: 1, offset: 1 }] });
    await scene.start();
    await scene.step();
    await scene.step();
    await scene.stop();
    expect(seen).toEqual([2, 2]);
  });
});
