/**
 * A real AI SDK provider package, `@ai-sdk/openai-compatible`, pointed at the local wire server
 * that replays Chat Completions transcripts: through `aiSdkProvider` and `createAgent`, the same
 * exchange gives the same bus events as the scripted brain, streaming and not.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent, createBus, defineTool } from '../../src/index.js';
import type { Provider, ScriptedReply } from '../../src/index.js';
import { aiSdkProvider } from '../../src/llm/ai-sdk/index.js';
import { ProviderError } from '../../src/llm/provider-error.js';
import { recordEvents, scriptedProvider, sequentialIds, steppedClock } from '../../src/testing/index.js';
import { collect, request } from './ai-sdk-helpers.js';
import { normalizeEvents } from './normalize.js';
import {
  ACTION_PIECES,
  ACTION_TEXT,
  CALL_A,
  CALL_B,
  PARALLEL_CALLS_STREAM,
  PLAIN_PIECES,
  PLAIN_TEXT,
  RATE_LIMITED,
  REASONING_CONTENT_STREAM,
  SINGLE_CALL_STREAM,
  completion,
  textStream,
  usage,
} from './transcripts/openai.js';
import { startWireServer, type WireReply, type WireServer } from './wire-server.js';

let server: WireServer;

beforeEach(async () => {
  server = await startWireServer();
});

afterEach(async () => {
  expect(server.unexpected).toEqual([]);
  await server.close();
});

/** A local OpenAI-compatible server as a user would name it; the provider package holds the key. */
function model() {
  return createOpenAICompatible({ name: 'local', baseURL: `${server.url}/v1`, apiKey: 'sk-local-test-key', includeUsage: true })('qwen2.5');
}

const adapter = (timeoutMs = 5_000) => aiSdkProvider(model(), { timeoutMs });

function lookupPlayer(executed: string[]) {
  return defineTool({
    name: 'lookup_player',
    description: 'Find a player by id.',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
    readOnly: true,
    execute: ({ id }) => {
      executed.push(String(id));
      return { name: 'Ana', team: 'red' };
    },
  });
}

async function run(provider: Provider, options: { protocol: 'xml' | 'native'; stream: boolean }) {
  const executed: string[] = [];
  const bus = createBus({ ids: sequentialIds(), clock: steppedClock(1_000, 1) });
  const events = recordEvents(bus);
  const agent = createAgent({ name: 'referee', instructions: 'You are the referee.', tools: [lookupPlayer(executed)], provider, bus, ...options });
  const result = await agent.run('Who is player 7?');
  return { result, executed, events: normalizeEvents(events.all) };
}

const ROUND_1 = usage(82, 17);
const ROUND_2 = usage(120, 9);
const asUsage = (wire: typeof ROUND_1) => ({ inputTokens: wire.prompt_tokens, outputTokens: wire.completion_tokens, totalTokens: wire.total_tokens });

const XML_TURNS: ScriptedReply[] = [
  { text: ACTION_TEXT, finishReason: 'stop_sequence', stopSequence: '</ACTION>', usage: asUsage(ROUND_1) },
  { text: PLAIN_TEXT, usage: asUsage(ROUND_2) },
];
const NATIVE_TURNS: ScriptedReply[] = [
  { toolCalls: [{ id: CALL_A, name: 'lookup_player', arguments: '{"id":"7"}' }], usage: { inputTokens: 96, outputTokens: 18, totalTokens: 114 } },
  { text: PLAIN_TEXT, usage: asUsage(ROUND_2) },
];

function body(index = 0): Record<string, unknown> {
  return server.requests[index]!.body as Record<string, unknown>;
}

describe('an agent on aiSdkProvider(@ai-sdk/openai-compatible) against a wire transcript', () => {
  it.each([
    ['streaming', true, [{ kind: 'sse', events: textStream(ACTION_PIECES, 'stop', ROUND_1) }, { kind: 'sse', events: textStream(PLAIN_PIECES, 'stop', ROUND_2) }]],
    ['whole responses', false, [{ kind: 'json', body: completion({ content: ACTION_TEXT }, 'stop', ROUND_1) }, { kind: 'json', body: completion({ content: PLAIN_TEXT }, 'stop', ROUND_2) }]],
  ] as [string, boolean, WireReply[]][])('publishes the same XML-protocol events as the scripted brain (%s)', async (_mode, stream, replies) => {
    server.reply(...replies);
    const real = await run(adapter(), { protocol: 'xml', stream });
    const scripted = await run(scriptedProvider(XML_TURNS, { stream }), { protocol: 'xml', stream });

    expect(real.result).toMatchObject({ reason: 'final_answer', text: PLAIN_TEXT });
    expect(real.executed).toEqual(['7']);
    expect(real.events).toEqual(scripted.events);
    expect(real.events.map((event) => event.type).includes('llm.delta')).toBe(stream);
    const sent = server.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-local-test-key');
    expect(body()).toMatchObject({ model: 'qwen2.5', stop: ['</ACTION>'], ...(stream && { stream: true, stream_options: { include_usage: true } }) });
    expect(body()).not.toHaveProperty('tools');
    expect((body()['messages'] as unknown[])[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You are the referee.') });
  });

  it.each([
    ['streaming', true, { kind: 'sse', events: SINGLE_CALL_STREAM }, { kind: 'sse', events: textStream(PLAIN_PIECES, 'stop', ROUND_2) }],
    [
      'whole responses',
      false,
      { kind: 'json', body: completion({ tool_calls: [{ id: CALL_A, type: 'function', function: { name: 'lookup_player', arguments: '{"id":"7"}' } }] }, 'tool_calls', usage(96, 18)) },
      { kind: 'json', body: completion({ content: PLAIN_TEXT }, 'stop', ROUND_2) },
    ],
  ] as [string, boolean, WireReply, WireReply][])('publishes the same native-protocol events as the scripted brain (%s)', async (_mode, stream, first, second) => {
    server.reply(first, second);
    const real = await run(adapter(), { protocol: 'native', stream });
    const scripted = await run(scriptedProvider(NATIVE_TURNS, { stream }), { protocol: 'native', stream });

    expect(real.result).toMatchObject({ reason: 'final_answer', text: PLAIN_TEXT });
    expect(real.executed).toEqual(['7']);
    expect(real.events).toEqual(scripted.events);
    expect(body()).toMatchObject({ tool_choice: 'auto', tools: [{ type: 'function', function: { name: 'lookup_player', parameters: { required: ['id'] } } }] });
    const messages = body(1)['messages'] as Record<string, unknown>[];
    expect(messages.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ id: CALL_A, type: 'function', function: { name: 'lookup_player', arguments: '{"id":"7"}' } }] });
    expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: CALL_A });
  });

  it('retries a 429 the server answered with retry-after, then goes on', async () => {
    server.reply(
      { kind: 'json', status: 429, headers: { 'retry-after': '0' }, body: RATE_LIMITED },
      { kind: 'sse', events: textStream(PLAIN_PIECES, 'stop', ROUND_2) },
    );
    const bus = createBus({ ids: sequentialIds(), clock: steppedClock(1_000, 1) });
    const events = recordEvents(bus);
    const agent = createAgent({ name: 'referee', provider: adapter(), bus });
    expect(await agent.run('Who is player 7?')).toMatchObject({ reason: 'final_answer', text: PLAIN_TEXT });
    expect(events.find('llm.error')!.data).toMatchObject({ kind: 'rate_limit', retryable: true, attempt: 1, message: expect.stringMatching(/^local\.chat: HTTP 429: Rate limit reached/) });
    expect(server.requests).toHaveLength(2);
  });
});

describe('aiSdkProvider(@ai-sdk/openai-compatible) on the wire', () => {
  it('reads the retry-after of a real 429 response', async () => {
    server.reply({ kind: 'json', status: 429, headers: { 'retry-after': '2' }, body: RATE_LIMITED });
    const error = await adapter().complete(request()).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, retryAfterMs: 2_000, status: 429 });
  });

  it('streams parallel calls and reasoning as the package decodes them', async () => {
    server.reply({ kind: 'sse', events: PARALLEL_CALLS_STREAM }, { kind: 'sse', events: REASONING_CONTENT_STREAM });
    const calls = await collect(adapter().stream!(request()));
    expect(calls.at(-1)).toEqual({
      type: 'finish',
      response: {
        text: '',
        finishReason: 'tool_calls',
        toolCalls: [
          { id: CALL_A, name: 'lookup_player', arguments: '{"id": "7"}' },
          { id: CALL_B, name: 'lookup_team', arguments: '{"team": "Rovers"}' },
        ],
        usage: { inputTokens: 101, outputTokens: 42, totalTokens: 143 },
      },
    });
    const thought = await collect(adapter().stream!(request()));
    expect(thought.filter((event) => event.type === 'reasoning').map((event) => (event as { text: string }).text).join('')).toBe('The user asks about player 7. The roster says Ana.');
    expect(thought.at(-1)).toMatchObject({ response: { text: 'Player 7 is Ana.', finishReason: 'stop' } });
  });

  it('fails a stream cut mid-<ACTION> as network, after the text it did show', async () => {
    server.reply({ kind: 'sse', events: textStream(ACTION_PIECES, 'stop', ROUND_1), cutAfter: 5 });
    const shown: string[] = [];
    const error = await (async () => {
      for await (const event of adapter().stream!(request({ stop: ['</ACTION>'] }))) if (event.type === 'text') shown.push(event.text);
    })().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(shown.join('')).toBe('I will look that up.\n<ACTION');
  });

  it('fails a stream that ends cleanly before any finish_reason as a retryable error, never a short answer', async () => {
    server.reply({ kind: 'sse', events: textStream(PLAIN_PIECES).filter((event) => typeof event !== 'string' || !event.includes('"finish_reason":"stop"')) });
    const error = await collect(adapter().stream!(request())).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ kind: 'server', retryable: true, message: expect.stringContaining('Response stream ended without a finish reason') });
  });

  it('aborts a request mid-stream', async () => {
    server.reply({ kind: 'sse', events: textStream(PLAIN_PIECES), hangAfter: 3 });
    const controller = new AbortController();
    const error = await (async () => {
      for await (const event of adapter().stream!(request({ signal: controller.signal }))) if (event.type === 'text') controller.abort();
    })().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ kind: 'aborted' });
  });
});
