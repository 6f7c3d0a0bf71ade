import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAgent, createScene, defineTool, type ModelRequest, type Provider } from '../../src/index.js';
import { openaiProvider } from '../../src/llm/openai/index.js';
import { countMessageTokens, countTokens } from '../../src/agent/memory/index.js';
import { recordEvents, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { startWireServer, type WireServer } from '../llm/wire-server.js';
import { ACTION_PIECES, PLAIN_PIECES, textStream, usage } from '../llm/transcripts/openai.js';

const lookup = defineTool({
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
  readOnly: true,
  execute: () => ({ name: 'Ana' }),
});

/** A provider that answers from a list and never reports usage, as some local servers do. */
function silentProvider(replies: string[]): Provider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    name: 'local',
    model: 'gpt-4o-mini',
    requests,
    complete: async (request) => {
      // A copy: the run goes on adding to its messages.
      requests.push({ ...request, messages: [...request.messages] });
      return { text: replies.shift() ?? 'Done.', finishReason: 'stop' };
    },
  };
}

describe('usage a provider does not report', () => {
  it('is counted with the tokenizer of the model family and marked estimated', async () => {
    const provider = silentProvider(['Player 7 is Ana.']);
    const { agent, events } = testAgent({ provider, stream: false });
    const result = await agent.run('Who is player 7?');
    const count = (text: string): number => countTokens(text, 'o200k_base');
    const input = countMessageTokens(provider.requests[0]!.messages, count);
    const output = count('Player 7 is Ana.');
    // gpt-4o-mini is in the default price table ($0.15 / $0.60 per million): the estimate is priced too.
    const costUsd = Math.round((input * 0.15 + output * 0.6) * 1e3) / 1e9;
    const expected = { inputTokens: input, outputTokens: output, totalTokens: input + output, estimated: true, costUsd };
    expect(events.find('llm.response')!.data.usage).toEqual(expected);
    expect(result.usage).toEqual(expected);
    expect(events.find('agent.finished')!.data.stats.usage).toEqual(expected);
  });

  it('is left as the provider sent it when it sent it: no mark', async () => {
    const provider = scriptedProvider([{ text: 'Ana.', usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 } }]);
    const result = await testAgent({ provider }).agent.run('hi');
    expect(result.usage).toEqual({ inputTokens: 10, outputTokens: 2, totalTokens: 12 });
  });

  it('keeps the mark in every sum: a run with one estimated round is estimated', async () => {
    const provider = scriptedProvider([
      { text: '<ACTION><lookup_player><id>7</id></lookup_player></ACTION>', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
      'Ana.', // usage estimated by the scripted provider
    ]);
    const result = await testAgent({ provider, tools: [lookup], stream: false }).agent.run('hi');
    expect(result.usage.totalTokens).toBeGreaterThan(15);
    expect(result.usage.estimated).toBe(true);
  });

  it('is charged to budgets, which say their token count includes estimates', async () => {
    const provider = silentProvider(['Ana.']);
    const scene = createScene({ name: 'estimate', seed: 1, budget: { tokens: 1_000_000 } });
    scene.add({ name: 'reader', provider, triggers: ['start'] });
    const result = await scene.run({ ticks: 1 });
    expect(result.usage.tokens).toBeGreaterThan(0);
    expect(result.usage.estimatedTokens).toBe(true);
    expect(scene.budget!.usage().estimatedTokens).toBe(true);
  });
});

describe('a stream stopped at </ACTION>', () => {
  let server: WireServer;
  beforeEach(async () => {
    server = await startWireServer();
    vi.stubEnv('OPENAI_API_KEY', '');
    vi.stubEnv('OPENAI_BASE_URL', '');
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await server.close();
  });

  it('still counts its round: estimated, where the provider’s own usage never arrived', async () => {
    // A server that does not honour the stop sequence writes `</ACTION>` and goes on; troupe stops
    // reading there, before the usage chunk at the end.
    server.reply(
      { kind: 'sse', events: textStream([...ACTION_PIECES, '</ACTION>', ' and then some more text'], 'stop', usage(82, 17)) },
      { kind: 'sse', events: textStream(PLAIN_PIECES, 'stop', usage(120, 9)) },
    );
    const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test-usage-1a2b3c4d', baseURL: `${server.url}/v1`, timeoutMs: 5_000 });
    const agent = createAgent({ name: 'referee', tools: [lookup], provider });
    const events = recordEvents(agent.bus);
    const result = await agent.run('Who is player 7?');
    expect(result.reason).toBe('final_answer');
    const [first, second] = events.filter('llm.response').map((event) => event.data.usage);
    expect(first).toMatchObject({ estimated: true });
    expect(first!.outputTokens).toBeGreaterThan(5);
    expect(second).toEqual({ inputTokens: 120, outputTokens: 9, totalTokens: 129, costUsd: 0.0000234 });
    expect(result.usage.totalTokens).toBe(first!.totalTokens + 129);
    expect(result.usage.estimated).toBe(true);
  });
});

describe('a scene’s usage', () => {
  it('is counted without a budget: model calls, tool calls and tokens', async () => {
    const provider = scriptedProvider(() => ({ text: '<ACTION><lookup_player><id>7</id></lookup_player></ACTION>', usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 } }));
    const scene = createScene({ name: 'counted', seed: 1, schedule: 'every-tick' });
    scene.add({ name: 'a', provider, tools: [lookup] });
    scene.add({ name: 'b', provider, tools: [lookup] });
    const result = await scene.run({ ticks: 3 });
    expect(scene.budget).toBeUndefined();
    expect(result.usage).toMatchObject({ modelCalls: 6, toolCalls: 6, tokens: 180 });
    expect(result.usage.estimatedTokens).toBeUndefined();
  });

  it('of scripted brains is their calls and no tokens: a brain spends none, and is not estimated', async () => {
    const scene = createScene({ name: 'brains', seed: 1, schedule: 'every-tick' });
    scene.add({ name: 'a', brain: () => '<ACTION><lookup_player><id>7</id></lookup_player></ACTION>', tools: [lookup] });
    const result = await scene.run({ ticks: 2 });
    expect(result.usage).toMatchObject({ modelCalls: 2, toolCalls: 2, tokens: 0 });
    expect(result.usage.estimatedTokens).toBeUndefined();
  });
});
