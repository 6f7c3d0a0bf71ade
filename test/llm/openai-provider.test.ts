import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { openaiProvider, type OpenAIProviderOptions } from '../../src/llm/openai/index.js';
import { ProviderError } from '../../src/llm/provider-error.js';
import type { ModelRequest, StreamEvent } from '../../src/llm/types.js';
import { startWireServer, type WireServer } from './wire-server.js';
import {
  ACTION_PIECES,
  ACTION_TEXT,
  BROKEN_ARGUMENTS,
  BROKEN_CALL_STREAM,
  CALL_A,
  CALL_B,
  PARALLEL_CALLS_STREAM,
  PLAIN_PIECES,
  PLAIN_TEXT,
  RATE_LIMITED,
  REASONING_CONTENT_STREAM,
  REASONING_STREAM,
  REFUSAL_STREAM,
  REFUSAL_TEXT,
  SERVER_ERROR,
  SINGLE_CALL_STREAM,
  call,
  chunk,
  completion,
  invalidKey,
  textStream,
  usage,
} from './transcripts/openai.js';

const KEY = 'sk-test-4f9a1c2e7b3d8a6f0e5c';
const SECOND_KEY = 'sk-test-second-9b8c7d6e5f4a';

let server: WireServer;

beforeEach(async () => {
  server = await startWireServer();
  // The client and the adapter read these: a developer's own settings must not leak into a test.
  vi.stubEnv('OPENAI_API_KEY', '');
  vi.stubEnv('OPENAI_BASE_URL', '');
});

afterEach(async () => {
  vi.unstubAllEnvs();
  expect(server.unexpected).toEqual([]);
  await server.close();
});

/** A fixed clock: the wait a rate-limited key reports is then exactly the server's retry-after. */
function provider(options: Partial<OpenAIProviderOptions> = {}) {
  return openaiProvider({ model: 'gpt-4o-mini', apiKey: KEY, baseURL: `${server.url}/v1`, timeoutMs: 5_000, clock: () => 1_000, ...options });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [
      { role: 'system', content: 'You are the referee.' },
      { role: 'user', content: 'Who is player 7?' },
    ],
    signal: new AbortController().signal,
    round: 1,
    agent: 'referee',
    ...overrides,
  };
}

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const all: StreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

function body(index = 0): Record<string, unknown> {
  return server.requests[index]!.body as Record<string, unknown>;
}

const lookupPlayer = {
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
};

describe('openaiProvider: complete', () => {
  it('answers text with its usage, sending the key of that request', async () => {
    server.reply({ kind: 'json', body: completion({ content: PLAIN_TEXT }, 'stop', usage(82, 17)) });
    const response = await provider().complete(request());
    expect(response).toEqual({ text: PLAIN_TEXT, finishReason: 'stop', usage: { inputTokens: 82, outputTokens: 17, totalTokens: 99 } });
    const sent = server.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(body()).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are the referee.' },
        { role: 'user', content: 'Who is player 7?' },
      ],
      stream: false,
    });
  });

  it('maps tools, tool_choice, stop, temperature, max_tokens and the native conversation', async () => {
    server.reply({ kind: 'json', body: completion({ content: 'Ana.' }, 'stop') });
    await provider({ headers: { 'x-team': 'rovers' } }).complete(
      request({
        messages: [
          { role: 'system', content: 'You are the referee.' },
          { role: 'user', content: 'Who is player 7?' },
          { role: 'assistant', content: '', toolCalls: [{ id: CALL_A, name: 'lookup_player', arguments: '{"id":"7"}' }] },
          { role: 'tool', callId: CALL_A, name: 'lookup_player', content: '{"name":"Ana"}' },
          { role: 'assistant', content: 'Checking.', toolCalls: [{ id: CALL_B, name: 'lookup_player', arguments: '{"id": 7' }] },
          { role: 'tool', callId: CALL_B, name: 'lookup_player', content: 'error: invalid JSON' },
        ],
        tools: [lookupPlayer],
        toolChoice: 'required',
        stop: ['</ACTION>'],
        temperature: 0.2,
        maxTokens: 512,
      }),
    );
    expect(server.requests[0]!.headers['x-team']).toBe('rovers');
    expect(body()).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are the referee.' },
        { role: 'user', content: 'Who is player 7?' },
        { role: 'assistant', content: null, tool_calls: [call(CALL_A, 'lookup_player', '{"id":"7"}')] },
        { role: 'tool', tool_call_id: CALL_A, content: '{"name":"Ana"}' },
        // Arguments go back exactly as the model wrote them, broken or not.
        { role: 'assistant', content: 'Checking.', tool_calls: [call(CALL_B, 'lookup_player', '{"id": 7')] },
        { role: 'tool', tool_call_id: CALL_B, content: 'error: invalid JSON' },
      ],
      tools: [{ type: 'function', function: lookupPlayer }],
      tool_choice: 'required',
      stop: ['</ACTION>'],
      temperature: 0.2,
      max_tokens: 512,
      stream: false,
    });
  });

  it.each(['auto', 'none'] as const)('sends toolChoice %s as tool_choice', async (toolChoice) => {
    server.reply({ kind: 'json', body: completion({ content: 'Ana.' }, 'stop') });
    await provider().complete(request({ tools: [lookupPlayer], toolChoice }));
    expect(body().tool_choice).toBe(toolChoice);
  });

  it.each(['o3-mini', 'o4-mini-2025-04-16', 'openai/o1', 'gpt-5', 'gpt-5-mini'])(
    'gives reasoning model %s max_completion_tokens and leaves out stop and temperature',
    async (model) => {
      server.reply({ kind: 'json', body: completion({ content: 'Ana.' }, 'stop') });
      await provider({ model }).complete(request({ stop: ['</ACTION>'], temperature: 0.2, maxTokens: 512 }));
      expect(body()).toMatchObject({ model, max_completion_tokens: 512 });
      expect(body()).not.toHaveProperty('max_tokens');
      expect(body()).not.toHaveProperty('stop');
      expect(body()).not.toHaveProperty('temperature');
    },
  );

  it('lets reasoningModel override the guess from the name', async () => {
    server.reply({ kind: 'json', body: completion({ content: 'Ana.' }, 'stop') }, { kind: 'json', body: completion({ content: 'Ana.' }, 'stop') });
    await provider({ model: 'gpt-4o', reasoningModel: true }).complete(request({ maxTokens: 64 }));
    await provider({ model: 'o3-mini', reasoningModel: false }).complete(request({ maxTokens: 64 }));
    expect(body(0)).toMatchObject({ max_completion_tokens: 64 });
    expect(body(1)).toMatchObject({ max_tokens: 64 });
  });

  it('reports an <ACTION> answer cut at </ACTION> as stop_sequence', async () => {
    server.reply({ kind: 'json', body: completion({ content: ACTION_TEXT }, 'stop') });
    const response = await provider().complete(request({ stop: ['</ACTION>'] }));
    expect(response).toMatchObject({ text: ACTION_TEXT, finishReason: 'stop_sequence', stopSequence: '</ACTION>' });
  });

  it.each([
    ['no stop sequence was sent', ACTION_TEXT, undefined],
    ['the block is closed', `${ACTION_TEXT}</ACTION>`, ['</ACTION>']],
    ['there is no block', PLAIN_TEXT, ['</ACTION>']],
  ])('keeps stop when %s', async (_case, text, stop) => {
    server.reply({ kind: 'json', body: completion({ content: text }, 'stop') });
    const response = await provider().complete(request(stop === undefined ? {} : { stop }));
    expect(response.finishReason).toBe('stop');
    expect(response).not.toHaveProperty('stopSequence');
  });

  it('returns one native call with its raw arguments', async () => {
    server.reply({ kind: 'json', body: completion({ tool_calls: [call(CALL_A, 'lookup_player', '{"id":"7"}')] }, 'tool_calls') });
    const response = await provider().complete(request({ tools: [lookupPlayer] }));
    expect(response).toMatchObject({ text: '', finishReason: 'tool_calls', toolCalls: [{ id: CALL_A, name: 'lookup_player', arguments: '{"id":"7"}' }] });
  });

  it('returns parallel calls in order, and broken JSON arguments untouched', async () => {
    const calls = [call(CALL_A, 'lookup_player', '{"id":"7"}'), call(CALL_B, 'lookup_player', BROKEN_ARGUMENTS)];
    server.reply({ kind: 'json', body: completion({ content: 'Looking both up.', tool_calls: calls }, 'tool_calls') });
    const response = await provider().complete(request({ tools: [lookupPlayer] }));
    expect(response.text).toBe('Looking both up.');
    expect(response.toolCalls).toEqual([
      { id: CALL_A, name: 'lookup_player', arguments: '{"id":"7"}' },
      { id: CALL_B, name: 'lookup_player', arguments: BROKEN_ARGUMENTS },
    ]);
  });

  it('takes the legacy function_call, and calls a server ended with stop', async () => {
    server.reply(
      { kind: 'json', body: completion({ function_call: { name: 'lookup_player', arguments: '{"id":"7"}' } }, 'function_call') },
      { kind: 'json', body: completion({ tool_calls: [call(CALL_A, 'lookup_player', '{"id":"7"}')] }, 'stop') },
    );
    const legacy = await provider().complete(request());
    expect(legacy).toMatchObject({ finishReason: 'tool_calls', toolCalls: [{ id: 'call_1', name: 'lookup_player', arguments: '{"id":"7"}' }] });
    const ollama = await provider().complete(request());
    expect(ollama.finishReason).toBe('tool_calls');
  });

  it.each([
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['eos', 'stop'],
  ])('maps finish_reason %s to %s', async (wire, finishReason) => {
    server.reply({ kind: 'json', body: completion({ content: 'Player 7 is' }, wire) });
    expect((await provider().complete(request())).finishReason).toBe(finishReason);
  });

  it('reports a refusal with its text', async () => {
    server.reply({ kind: 'json', body: completion({ refusal: REFUSAL_TEXT }, 'stop') });
    const response = await provider().complete(request());
    expect(response).toMatchObject({ text: REFUSAL_TEXT, finishReason: 'refusal' });
  });

  it('answers an empty choice list as an error turn, and a server without usage without usage', async () => {
    server.reply(
      { kind: 'json', body: { ...completion({ content: '' }, 'stop'), choices: [] } },
      { kind: 'json', body: completion({ content: 'Ana.' }, 'stop', null) },
    );
    expect(await provider().complete(request())).toMatchObject({ text: '', finishReason: 'error' });
    expect(await provider().complete(request())).toEqual({ text: 'Ana.', finishReason: 'stop' });
  });
});

describe('openaiProvider: stream', () => {
  it('streams text as it arrives, then finishes with the usage', async () => {
    server.reply({ kind: 'sse', events: textStream(PLAIN_PIECES, 'stop', usage(82, 17)) });
    const events = await collect(provider().stream!(request()));
    expect(events.filter((event) => event.type === 'text').map((event) => (event as { text: string }).text)).toEqual(PLAIN_PIECES);
    expect(events.at(-1)).toEqual({
      type: 'finish',
      response: { text: PLAIN_TEXT, finishReason: 'stop', usage: { inputTokens: 82, outputTokens: 17, totalTokens: 99 } },
    });
    expect(body()).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('reports a streamed <ACTION> answer cut at </ACTION> as stop_sequence', async () => {
    server.reply({ kind: 'sse', events: textStream(ACTION_PIECES) });
    const events = await collect(provider().stream!(request({ stop: ['</ACTION>'] })));
    expect(events.at(-1)).toMatchObject({ type: 'finish', response: { text: ACTION_TEXT, finishReason: 'stop_sequence', stopSequence: '</ACTION>' } });
  });

  it('streams one native call in pieces', async () => {
    server.reply({ kind: 'sse', events: SINGLE_CALL_STREAM });
    const events = await collect(provider().stream!(request({ tools: [lookupPlayer] })));
    expect(events.filter((event) => event.type === 'tool_call_delta')).toEqual([
      { type: 'tool_call_delta', index: 0, id: CALL_A, name: 'lookup_player', argumentsDelta: '' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{"' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: 'id' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '":"' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '7' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '"}' },
    ]);
    expect(events.at(-1)).toEqual({
      type: 'finish',
      response: {
        text: '',
        finishReason: 'tool_calls',
        toolCalls: [{ id: CALL_A, name: 'lookup_player', arguments: '{"id":"7"}' }],
        usage: { inputTokens: 96, outputTokens: 18, totalTokens: 114 },
      },
    });
  });

  it('streams parallel calls whose argument deltas interleave, by index', async () => {
    server.reply({ kind: 'sse', events: PARALLEL_CALLS_STREAM });
    const events = await collect(provider().stream!(request({ tools: [lookupPlayer] })));
    const deltas = events.filter((event) => event.type === 'tool_call_delta').map((event) => [(event as { index: number }).index, (event as { argumentsDelta: string }).argumentsDelta]);
    expect(deltas).toEqual([
      [0, ''],
      [1, ''],
      [0, '{"id"'],
      [1, '{"team"'],
      [1, ': "Rovers"}'],
      [0, ': "7"}'],
    ]);
    expect(events.at(-1)).toMatchObject({
      response: {
        finishReason: 'tool_calls',
        toolCalls: [
          { id: CALL_A, name: 'lookup_player', arguments: '{"id": "7"}' },
          { id: CALL_B, name: 'lookup_team', arguments: '{"team": "Rovers"}' },
        ],
      },
    });
  });

  it('tells apart parallel calls a server sends all at index 0, by their ids', async () => {
    server.reply({
      kind: 'sse',
      events: [
        chunk({ role: 'assistant', tool_calls: [{ index: 0, id: CALL_A, type: 'function', function: { name: 'lookup_player', arguments: '{"id":"7"}' } }] }),
        chunk({ tool_calls: [{ index: 0, id: CALL_B, type: 'function', function: { name: 'lookup_player', arguments: '{"id":"9"}' } }] }),
        chunk({}, 'tool_calls'),
        '[DONE]',
      ],
    });
    const events = await collect(provider().stream!(request({ tools: [lookupPlayer] })));
    expect(events.at(-1)).toMatchObject({
      response: {
        toolCalls: [
          { id: CALL_A, arguments: '{"id":"7"}' },
          { id: CALL_B, arguments: '{"id":"9"}' },
        ],
      },
    });
  });

  it('passes broken streamed arguments through untouched', async () => {
    server.reply({ kind: 'sse', events: BROKEN_CALL_STREAM });
    const events = await collect(provider().stream!(request({ tools: [lookupPlayer] })));
    expect(events.at(-1)).toMatchObject({ response: { toolCalls: [{ id: CALL_A, arguments: BROKEN_ARGUMENTS }] } });
  });

  it('streams reasoning_content as reasoning, apart from the reply', async () => {
    server.reply({ kind: 'sse', events: REASONING_CONTENT_STREAM });
    const events = await collect(provider({ model: 'deepseek-reasoner' }).stream!(request()));
    expect(events.slice(0, -1)).toEqual([
      { type: 'reasoning', text: 'The user asks about player 7.' },
      { type: 'reasoning', text: ' The roster says Ana.' },
      { type: 'text', text: 'Player 7 ' },
      { type: 'text', text: 'is Ana.' },
    ]);
    expect(events.at(-1)).toMatchObject({ response: { text: 'Player 7 is Ana.', finishReason: 'stop', usage: { outputTokens: 31 } } });
  });

  it('streams Ollama and OpenRouter reasoning, once when both fields carry it', async () => {
    server.reply({ kind: 'sse', events: REASONING_STREAM });
    const events = await collect(provider({ model: 'qwen3:8b' }).stream!(request()));
    expect(events.slice(0, -1)).toEqual([
      { type: 'reasoning', text: 'Player 7…' },
      { type: 'reasoning', text: ' is Ana.' },
      { type: 'text', text: 'Ana.' },
    ]);
  });

  it('streams a refusal as text and finishes with refusal', async () => {
    server.reply({ kind: 'sse', events: REFUSAL_STREAM });
    const events = await collect(provider().stream!(request()));
    expect(events.at(-1)).toMatchObject({ response: { text: REFUSAL_TEXT, finishReason: 'refusal' } });
  });

  it('maps a streamed length stop', async () => {
    server.reply({ kind: 'sse', events: textStream(['<ACTION>', '\n<lookup_player>'], 'length') });
    const events = await collect(provider().stream!(request({ stop: ['</ACTION>'] })));
    expect(events.at(-1)).toMatchObject({ response: { finishReason: 'length' } });
  });

  it('lets a consumer stop early, closing the request', async () => {
    server.reply({ kind: 'sse', events: textStream(PLAIN_PIECES), hangAfter: 3 });
    const seen: StreamEvent[] = [];
    for await (const event of provider().stream!(request())) {
      seen.push(event);
      if (seen.length === 2) break;
    }
    expect(seen.map((event) => event.type)).toEqual(['text', 'text']);
  });
});

describe('openaiProvider: keys and servers', () => {
  it('takes several comma-separated keys from OPENAI_API_KEY and the server from OPENAI_BASE_URL', async () => {
    vi.stubEnv('OPENAI_API_KEY', `${KEY}, ${SECOND_KEY}`);
    vi.stubEnv('OPENAI_BASE_URL', `${server.url}/v1`);
    server.reply({ kind: 'json', body: completion({ content: 'one' }, 'stop') }, { kind: 'json', body: completion({ content: 'two' }, 'stop') });
    const fromEnv = openaiProvider({ model: 'gpt-4o-mini' });
    await fromEnv.complete(request());
    await fromEnv.complete(request());
    expect(server.requests.map((sent) => sent.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${SECOND_KEY}`]);
  });

  it('needs no key for a local server given by baseURL, and sends the placeholder the client requires', async () => {
    server.reply({ kind: 'json', body: completion({ content: 'Ana.' }, 'stop') });
    const local = openaiProvider({ model: 'llama3.2', baseURL: `${server.url}/v1` });
    expect(local.name).toBe('openai');
    expect((await local.complete(request())).text).toBe('Ana.');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer no-key');
  });

  it('refuses to start with no key and no baseURL, or with no model', () => {
    expect(() => openaiProvider({ model: 'gpt-4o-mini' })).toThrow(ConfigError);
    expect(() => openaiProvider({ model: 'gpt-4o-mini' })).toThrow(/OPENAI_API_KEY/);
    expect(() => openaiProvider({ model: '', apiKey: KEY })).toThrow(ConfigError);
  });

  it('goes on with the second key after a 401, and never shows a key in the error', async () => {
    server.reply(
      { kind: 'json', status: 401, body: invalidKey(`sk-test-********************8a6f0e5c`) },
      { kind: 'json', body: completion({ content: 'Ana.' }, 'stop') },
    );
    const rotating = provider({ apiKey: undefined, apiKeys: [KEY, SECOND_KEY], name: 'openai-main' });
    const error = await failure(rotating.complete(request()));
    expect(error).toMatchObject({ kind: 'auth', retryable: true, status: 401 });
    expect(error.message).toMatch(/^openai-main: HTTP 401/);
    expect(error.message).not.toContain(KEY);
    expect(error.message).not.toContain('8a6f0e5c');
    expect((await rotating.complete(request())).text).toBe('Ana.');
    expect(server.requests.map((sent) => sent.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${SECOND_KEY}`]);
  });

  it('fails for good once the only key is refused', async () => {
    server.reply({ kind: 'json', status: 401, body: invalidKey('sk-test-****0e5c') });
    const error = await failure(provider().complete(request()));
    expect(error).toMatchObject({ kind: 'auth', retryable: false });
    expect(error.message).not.toContain(KEY);
  });
});

describe('openaiProvider: faults', () => {
  it('reports 429 as a retryable rate_limit with the retry-after the server asked for', async () => {
    server.reply({ kind: 'json', status: 429, headers: { 'retry-after': '2' }, body: RATE_LIMITED });
    const error = await failure(provider().complete(request()));
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, retryAfterMs: 2_000, status: 429 });
    expect(error.message).toContain('Rate limit reached');
    // The client library retries nothing itself: one request, one answer.
    expect(server.requests).toHaveLength(1);
  });

  it('reports a 429 on a stream the same way', async () => {
    server.reply({ kind: 'json', status: 429, headers: { 'retry-after': '3' }, body: RATE_LIMITED });
    const error = await failure(collect(provider().stream!(request())));
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, retryAfterMs: 3_000 });
  });

  it('reports 500 as a retryable server error', async () => {
    server.reply({ kind: 'json', status: 500, body: SERVER_ERROR });
    const error = await failure(provider().complete(request()));
    expect(error).toMatchObject({ kind: 'server', retryable: true, status: 500 });
    expect(server.requests).toHaveLength(1);
  });

  it('reports a reset connection as a retryable network error', async () => {
    server.reply({ kind: 'reset' });
    expect(await failure(provider().complete(request()))).toMatchObject({ kind: 'network', retryable: true });
    server.reply({ kind: 'reset' });
    expect(await failure(collect(provider().stream!(request())))).toMatchObject({ kind: 'network', retryable: true });
  });

  it('fails a stream cut mid-<ACTION> as network, after the text it did show', async () => {
    server.reply({ kind: 'sse', events: textStream(ACTION_PIECES), cutAfter: 6 });
    const seen: StreamEvent[] = [];
    const error = await failure(
      (async () => {
        for await (const event of provider().stream!(request({ stop: ['</ACTION>'] }))) seen.push(event);
      })(),
    );
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(seen.map((event) => event.type)).toEqual(['text', 'text', 'text', 'text', 'text']);
    expect(seen.some((event) => event.type === 'finish')).toBe(false);
  });

  it('fails a stream that ends cleanly before any finish_reason as network, never a short answer', async () => {
    server.reply({ kind: 'sse', events: textStream(ACTION_PIECES).slice(0, 6) });
    const error = await failure(collect(provider().stream!(request({ stop: ['</ACTION>'] }))));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
  });

  it('reports an error event inside a stream', async () => {
    server.reply({ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), JSON.stringify({ error: { message: 'model overloaded', type: 'server_error', code: 503 } })] });
    const error = await failure(collect(provider().stream!(request())));
    expect(error.message).toContain('model overloaded');
  });

  it('times out a hung response', async () => {
    server.reply({ kind: 'hang' });
    const error = await failure(provider({ timeoutMs: 50 }).complete(request()));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('times out a stream that goes silent part-way', async () => {
    server.reply({ kind: 'sse', events: textStream(PLAIN_PIECES), hangAfter: 3 });
    const seen: StreamEvent[] = [];
    const error = await failure(
      (async () => {
        for await (const event of provider({ timeoutMs: 100 }).stream!(request())) seen.push(event);
      })(),
    );
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(seen).toEqual([
      { type: 'text', text: 'Player' },
      { type: 'text', text: ' 7' },
    ]);
  });

  it('reports an abort mid-stream as aborted', async () => {
    server.reply({ kind: 'sse', events: textStream(PLAIN_PIECES), hangAfter: 3 });
    const controller = new AbortController();
    const seen: StreamEvent[] = [];
    const error = await failure(
      (async () => {
        for await (const event of provider().stream!(request({ signal: controller.signal }))) {
          seen.push(event);
          if (seen.length === 2) controller.abort();
        }
      })(),
    );
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it('reports an abort of a waiting complete as aborted', async () => {
    server.reply({ kind: 'hang' });
    const controller = new AbortController();
    const pending = provider().complete(request({ signal: controller.signal }));
    await server.received(1);
    controller.abort();
    expect(await failure(pending)).toMatchObject({ kind: 'aborted', retryable: false });
  });
});
