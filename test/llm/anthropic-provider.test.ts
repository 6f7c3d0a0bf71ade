import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { anthropicProvider } from '../../src/llm/anthropic/index.js';
import type { ModelRequest, ToolSpec } from '../../src/llm/types.js';
import { adapter, ask, bodyOf, drain, KEY } from './anthropic-helpers.js';
import * as wire from './transcripts/anthropic.js';
import { startWireServer, type WireServer } from './wire-server.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  vi.unstubAllEnvs();
  expect(server.unexpected).toEqual([]);
  await server.close();
});

const lookupPlayer: ToolSpec = {
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { player_id: { type: 'string' } }, required: ['player_id'] },
};

describe('anthropicProvider: request mapping', () => {
  it('maps a native history, tools, tool choice and stop sequences onto the Messages API body', async () => {
    server.reply(wire.json(wire.textMessage));
    const request = ask({
      messages: [
        { role: 'system', content: 'You are the referee.' },
        { role: 'user', content: 'Who are 7 and 9?' },
        {
          role: 'assistant',
          content: 'Checking both.',
          toolCalls: [
            { id: 'toolu_01A', name: 'lookup_player', arguments: '{"player_id":"7"}' },
            // Stored broken (troupe reported it): goes back as {} so the turn stays valid.
            { id: 'toolu_01B', name: 'lookup_player', arguments: '{"player_id": "9"' },
          ],
        },
        { role: 'tool', callId: 'toolu_01A', name: 'lookup_player', content: '{"name":"Ana"}' },
        { role: 'tool', callId: 'toolu_01B', name: 'lookup_player', content: 'invalid arguments: not JSON' },
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'And their teams?' },
      ],
      tools: [lookupPlayer],
      toolChoice: 'required',
      stop: ['</ACTION>'],
      temperature: 0.2,
    });
    await adapter(server, { headers: { 'x-troupe-scene': 'tavern' } }).complete(request);

    const [received] = server.requests;
    expect(received!.method).toBe('POST');
    expect(received!.path).toBe('/v1/messages');
    expect(received!.body).toEqual({
      model: wire.MODEL,
      max_tokens: 4096,
      system: 'You are the referee.\n\nBe brief.',
      messages: [
        { role: 'user', content: 'Who are 7 and 9?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'lookup_player', input: { player_id: '7' } },
            { type: 'tool_use', id: 'toolu_01B', name: 'lookup_player', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01A', content: '{"name":"Ana"}' },
            { type: 'tool_result', tool_use_id: 'toolu_01B', content: 'invalid arguments: not JSON' },
          ],
        },
        { role: 'user', content: 'And their teams?' },
      ],
      tools: [{ name: 'lookup_player', description: 'Find a player by id.', input_schema: lookupPlayer.parameters }],
      tool_choice: { type: 'any' },
      stop_sequences: ['</ACTION>'],
      stream: false,
    });
    // API version 2026-10-21 removed temperature (a 400 if sent); the client authenticates with
    // `Authorization: Bearer` and names the version.
    expect(received!.headers['authorization']).toBe(`Bearer ${KEY}`);
    expect(received!.headers['x-api-key']).toBeUndefined();
    expect(received!.headers['anthropic-version']).toBe('2026-10-21');
    expect(received!.headers['x-troupe-scene']).toBe('tavern');
    // No retries inside the client: troupe's agent retries and reports each attempt.
    expect(received!.headers['x-stainless-retry-count']).toBe('0');
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['required', { type: 'any' }],
    ['none', { type: 'none' }],
  ] as const)('maps toolChoice %s to %j', async (toolChoice, expected) => {
    server.reply(wire.json(wire.textMessage));
    await adapter(server).complete(ask({ tools: [lookupPlayer], toolChoice }));
    expect(bodyOf(server)['tool_choice']).toEqual(expected);
  });

  it('sends neither tools nor a tool choice when no tools are offered', async () => {
    server.reply(wire.json(wire.textMessage));
    await adapter(server).complete(ask({ toolChoice: 'required', tools: [] }));
    expect(bodyOf(server)).not.toHaveProperty('tools');
    expect(bodyOf(server)).not.toHaveProperty('tool_choice');
  });

  it.each([
    ['a budget', { budgetTokens: 2048 }, { type: 'enabled', budget_tokens: 2048 }, 4096 + 2048],
    ['adaptive', 'adaptive', { type: 'adaptive' }, 4096],
  ] as const)('asks for thinking with %s', async (_, thinking, expected, maxTokens) => {
    server.reply(wire.json(wire.textMessage));
    await adapter(server, { thinking }).complete(ask());
    expect(bodyOf(server)).toMatchObject({ thinking: expected, max_tokens: maxTokens });
  });

  it('uses the request maxTokens, then the adapter maxTokens, for max_tokens', async () => {
    server.reply(wire.json(wire.textMessage), wire.json(wire.textMessage));
    const provider = adapter(server, { maxTokens: 1000 });
    await provider.complete(ask({ maxTokens: 256 }));
    await provider.complete(ask());
    expect(bodyOf(server, 0)['max_tokens']).toBe(256);
    expect(bodyOf(server, 1)['max_tokens']).toBe(1000);
  });

  it('reads several keys from ANTHROPIC_API_KEY and the server from ANTHROPIC_BASE_URL', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-env-key-one-aaaa, sk-ant-env-key-two-bbbb');
    vi.stubEnv('ANTHROPIC_BASE_URL', server.url);
    server.reply(wire.json(wire.textMessage), wire.json(wire.textMessage));
    const provider = anthropicProvider({ model: wire.MODEL });
    await provider.complete(ask());
    await provider.complete(ask());
    expect(server.requests.map((request) => request.headers['authorization'])).toEqual([
      'Bearer sk-ant-env-key-one-aaaa',
      'Bearer sk-ant-env-key-two-bbbb',
    ]);
  });

  it('throws ConfigError for host mistakes before any call', () => {
    vi.stubEnv('ANTHROPIC_API_KEY', '');
    expect(() => anthropicProvider({ model: wire.MODEL })).toThrow(/ANTHROPIC_API_KEY/);
    expect(() => anthropicProvider({ model: wire.MODEL, apiKey: KEY, thinking: { budgetTokens: 100 } })).toThrow(ConfigError);
    expect(() => anthropicProvider({ model: wire.MODEL, apiKey: KEY, maxTokens: 2000, thinking: { budgetTokens: 2048 } })).toThrow(
      /more than thinking.budgetTokens/,
    );
    expect(() => anthropicProvider({ model: wire.MODEL, apiKey: KEY, maxTokens: 0 })).toThrow(ConfigError);
  });
});

describe('anthropicProvider: complete', () => {
  it('returns the text, finish reason and usage (cache writes and reads counted as input)', async () => {
    server.reply(wire.json(wire.textMessage));
    const response = await adapter(server).complete(ask());
    expect(response).toEqual({
      text: 'Ana plays for the red team.',
      finishReason: 'stop',
      usage: { inputTokens: 412 + 64 + 128, outputTokens: 9, totalTokens: 604 + 9 },
    });
    expect(bodyOf(server)['stream']).toBe(false);
  });

  it('reports the stripped </ACTION> as the stop sequence', async () => {
    server.reply(wire.json(wire.actionMessage));
    const response = await adapter(server).complete(ask({ stop: ['</ACTION>'] }));
    expect(response).toMatchObject({ text: wire.ACTION_TEXT, finishReason: 'stop_sequence', stopSequence: '</ACTION>' });
  });

  it('returns parallel calls with their input as JSON text, and keeps thinking out of the text', async () => {
    server.reply(wire.json(wire.parallelMessage));
    const response = await adapter(server).complete(ask({ tools: [lookupPlayer] }));
    expect(response).toMatchObject({
      text: 'Checking both.',
      finishReason: 'tool_calls',
      toolCalls: [
        { id: 'toolu_01A09q90qw90lq917835lq9', name: 'lookup_player', arguments: '{"player_id":"7"}' },
        { id: 'toolu_01B19r81rx81mr828946mr8', name: 'lookup_player', arguments: '{"player_id":"9"}' },
      ],
    });
  });

  it.each([
    ['end_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'refusal'],
    ['pause_turn', 'stop'],
    ['tool_use', 'tool_calls'],
  ] as const)('maps stop_reason %s to finishReason %s', async (stopReason, finishReason) => {
    server.reply(wire.json(wire.endedWith(stopReason)));
    const response = await adapter(server).complete(ask());
    expect(response.finishReason).toBe(finishReason);
    expect(response.text).toBe('Partial');
  });
});

describe('anthropicProvider: stream', () => {
  const streamOf = (request: ModelRequest = ask()) => drain(adapter(server).stream!(request));

  it('streams text as it arrives, then one finish with the usage', async () => {
    server.reply(wire.sse(wire.textStream));
    const { events, error } = await streamOf();
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: 'text', text: 'Ana' },
      { type: 'text', text: ' plays' },
      { type: 'text', text: ' for the' },
      { type: 'text', text: ' red team.' },
      {
        type: 'finish',
        response: { text: 'Ana plays for the red team.', finishReason: 'stop', usage: { inputTokens: 540, outputTokens: 9, totalTokens: 549 } },
      },
    ]);
    expect(bodyOf(server)['stream']).toBe(true);
  });

  it('ends an <ACTION> answer with stop_sequence </ACTION>', async () => {
    server.reply(wire.sse(wire.actionStream));
    const { events } = await streamOf(ask({ stop: ['</ACTION>'] }));
    expect(events.at(-1)).toEqual({
      type: 'finish',
      response: {
        text: wire.ACTION_TEXT,
        finishReason: 'stop_sequence',
        stopSequence: '</ACTION>',
        usage: { inputTokens: 903, outputTokens: 24, totalTokens: 927 },
      },
    });
  });

  it('streams a native call: id and name first, then its arguments in pieces', async () => {
    server.reply(wire.sse(wire.toolStream));
    const { events } = await streamOf(ask({ tools: [lookupPlayer] }));
    expect(events.filter((event) => event.type === 'tool_call_delta')).toEqual([
      { type: 'tool_call_delta', index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'lookup_player', argumentsDelta: '' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{"player_id' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '": "7"}' },
    ]);
    expect(events.at(-1)).toMatchObject({
      response: {
        text: 'Let me look that up.',
        finishReason: 'tool_calls',
        toolCalls: [{ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'lookup_player', arguments: '{"player_id": "7"}' }],
      },
    });
  });

  it('numbers parallel calls in order, whatever their block index', async () => {
    server.reply(wire.sse(wire.parallelStream));
    const { events } = await streamOf(ask({ tools: [lookupPlayer] }));
    const deltas = events.filter((event) => event.type === 'tool_call_delta');
    expect(deltas.map((event) => event.index)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(events.at(-1)).toMatchObject({
      response: {
        toolCalls: [
          { id: 'toolu_01A09q90qw90lq917835lq9', arguments: '{"player_id": "7"}' },
          { id: 'toolu_01B19r81rx81mr828946mr8', arguments: '{"player_id": "9"}' },
        ],
      },
    });
  });

  it('routes interleaved pieces of parallel calls by their block', async () => {
    server.reply(wire.sse(wire.interleavedStream));
    const { events } = await streamOf(ask({ tools: [lookupPlayer] }));
    expect(events.filter((event) => event.type === 'tool_call_delta').map((event) => [event.index, event.argumentsDelta])).toEqual([
      [0, ''],
      [1, ''],
      [0, '{"player_id"'],
      [1, '{"player_id": "9", '],
      [0, ': "7"}'],
      [1, '"team": "red"}'],
    ]);
    expect(events.at(-1)).toMatchObject({
      response: {
        text: '',
        toolCalls: [
          { id: 'toolu_01C2interleavedAAAA', name: 'lookup_player', arguments: '{"player_id": "7"}' },
          { id: 'toolu_01D3interleavedBBBB', name: 'set_team', arguments: '{"player_id": "9", "team": "red"}' },
        ],
      },
    });
  });

  it('passes broken JSON arguments through untouched', async () => {
    server.reply(wire.sse(wire.brokenArgumentsStream));
    const { events, error } = await streamOf(ask({ tools: [lookupPlayer] }));
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ response: { toolCalls: [{ arguments: wire.BROKEN_ARGUMENTS }] } });
  });

  it('streams thinking as reasoning, never as text', async () => {
    server.reply(wire.sse(wire.thinkingStream));
    const { events } = await drain(adapter(server, { thinking: { budgetTokens: 2048 } }).stream!(ask()));
    expect(events.map((event) => event.type)).toEqual(['reasoning', 'reasoning', 'text', 'text', 'finish']);
    expect(events.filter((event) => event.type === 'reasoning').map((event) => event.text).join('')).toBe(
      'The roster says 7 is Ana; she moved to red last week.',
    );
    expect(events.at(-1)).toMatchObject({ response: { text: 'Ana is on the red team.', finishReason: 'stop' } });
  });

  it.each([
    ['refusal', wire.refusalStream, 'refusal'],
    ['max_tokens', wire.lengthStream, 'length'],
  ] as const)('maps a streamed %s stop', async (_, events, finishReason) => {
    server.reply(wire.sse(events));
    const { events: seen } = await streamOf();
    expect(seen.at(-1)).toMatchObject({ type: 'finish', response: { finishReason } });
  });
});

describe('anthropicProvider: thinking with tools', () => {
  it('sends a tool-calling turn back with its thinking block and signature', async () => {
    server.reply(wire.sse(wire.thinkingToolStream), wire.json(wire.textMessage));
    const provider = adapter(server, { thinking: { budgetTokens: 2048 } });
    const first = ask({ tools: [lookupPlayer] });
    const { events } = await drain(provider.stream!(first));
    const turn = events.at(-1);
    if (turn?.type !== 'finish') throw new Error('no finish');
    const call = turn.response.toolCalls![0]!;
    await provider.complete({
      ...first,
      messages: [
        ...first.messages,
        { role: 'assistant', content: turn.response.text, toolCalls: turn.response.toolCalls! },
        { role: 'tool', callId: call.id, name: call.name, content: '{"name":"Ana"}' },
      ],
    });
    const messages = bodyOf(server, 1)['messages'] as { role: string; content: unknown }[];
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should look up player 7.', signature: wire.SIGNATURE },
        { type: 'tool_use', id: 'toolu_01Fthinkingcall88888', name: 'lookup_player', input: { player_id: '7' } },
      ],
    });
  });

  it('does the same for a non-streamed turn', async () => {
    server.reply(wire.json(wire.parallelMessage), wire.json(wire.textMessage));
    const provider = adapter(server, { thinking: 'adaptive' });
    const first = ask({ tools: [lookupPlayer] });
    const response = await provider.complete(first);
    await provider.complete({
      ...first,
      messages: [...first.messages, { role: 'assistant', content: response.text, toolCalls: response.toolCalls! }],
    });
    const messages = bodyOf(server, 1)['messages'] as { role: string; content: { type: string }[] }[];
    expect(messages[1]!.content.map((block) => block.type)).toEqual(['thinking', 'text', 'tool_use', 'tool_use']);
  });
});
