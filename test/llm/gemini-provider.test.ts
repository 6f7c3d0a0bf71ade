import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, createAgent, createBus, defineTool, ProviderError, scriptedProvider, type ModelRequest, type Provider, type ScriptedReply, type StreamEvent } from '../../src/index.js';
import { sequentialIds, steppedClock, recordEvents } from '../../src/testing/index.js';
import { geminiProvider, type GeminiProviderOptions } from '../../src/llm/gemini/index.js';
import { normalizeEvents } from './normalize.js';
import { startWireServer, type WireServer } from './wire-server.js';
import {
  BAD_SCHEMA,
  BLOCKED,
  functionCall,
  INTERNAL,
  json,
  KEY_INVALID,
  MODEL,
  RATE_LIMITED,
  response,
  SIGNATURE,
  sse,
  STREAM_ACTION,
  STREAM_PARALLEL,
  STREAM_TEXT,
  STREAM_THINKING,
  text,
  usage,
  whole,
} from './transcripts/gemini.js';

const KEY = 'AIzaSyA1-first-test-key-Q7xv0000000000000';
const KEY_2 = 'AIzaSyB2-second-test-key-Lm3k000000000000';
const NOW = 1_000_000;
const GENERATE = `/v1beta/models/${MODEL}:generateContent`;
const STREAM = `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`;

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  expect(server.unexpected).toEqual([]);
  await server.close();
  vi.unstubAllEnvs();
});

function gemini(extra: Partial<GeminiProviderOptions> = {}) {
  return geminiProvider({ model: MODEL, apiKey: KEY, baseURL: server.url, timeoutMs: 5_000, clock: () => NOW, ...extra });
}

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [
      { role: 'system', content: 'You are the referee.' },
      { role: 'user', content: 'Who is player 7?' },
    ],
    signal: new AbortController().signal,
    round: 1,
    agent: 'referee',
    ...extra,
  };
}

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** The finish event's response (the last event of every stream). */
function finished(events: StreamEvent[]) {
  const last = events.at(-1)!;
  expect(last.type).toBe('finish');
  return (last as Extract<StreamEvent, { type: 'finish' }>).response;
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ProviderError);
  const provider = error as ProviderError;
  // No key ever reaches an error.
  expect(`${provider.message} ${String((provider.cause as Error | undefined)?.message)}`).not.toMatch(/AIza/);
  return provider;
}

type Body = {
  contents: { role: string; parts: Record<string, unknown>[] }[];
  systemInstruction?: { parts: { text: string }[] };
  generationConfig?: Record<string, unknown>;
  tools?: { functionDeclarations: Record<string, unknown>[] }[];
  toolConfig?: { functionCallingConfig: { mode: string } };
};
const body = (index = 0): Body => server.requests[index]!.body as Body;

describe('gemini: request mapping', () => {
  it('sends the conversation and settings to :generateContent, the key only in x-goog-api-key', async () => {
    server.reply(json(response([text('Ana.')], 'STOP', usage(12, 2))));
    await gemini().complete(request({ stop: ['</ACTION>'], temperature: 0.2, maxTokens: 256 }));
    const [sent] = server.requests;
    expect(sent!.method).toBe('POST');
    expect(sent!.path).toBe(GENERATE);
    expect(sent!.headers['x-goog-api-key']).toBe(KEY);
    expect(sent!.path).not.toContain('key=');
    expect(JSON.stringify(sent!.body)).not.toContain(KEY);
    expect(body()).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Who is player 7?' }] }],
      systemInstruction: { parts: [{ text: 'You are the referee.' }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 256, stopSequences: ['</ACTION>'] },
    });
  });

  it('streams from :streamGenerateContent?alt=sse with the same request', async () => {
    server.reply(sse(STREAM_TEXT));
    await collect(gemini({ headers: { 'x-trace-id': 'run-42' } }).stream!(request()));
    const [sent] = server.requests;
    expect(sent!.path).toBe(STREAM);
    expect(sent!.headers['x-goog-api-key']).toBe(KEY);
    expect(sent!.headers['x-trace-id']).toBe('run-42');
    expect(body().contents).toEqual([{ role: 'user', parts: [{ text: 'Who is player 7?' }] }]);
  });

  it('maps tools to functionDeclarations with raw JSON Schema, and a native exchange to model/user parts', async () => {
    const parameters = { type: 'object', properties: { player_id: { type: 'string' } }, required: ['player_id'], additionalProperties: false };
    server.reply(json(response([text('Ana and Bo.')], 'STOP', usage(90, 4))));
    await gemini().complete(
      request({
        tools: [{ name: 'lookup_player', description: 'Find a player by id.', parameters }],
        toolChoice: 'auto',
        messages: [
          { role: 'system', content: 'You are the referee.' },
          { role: 'user', content: 'Who are 7 and 9?' },
          {
            role: 'assistant',
            content: 'Checking both.',
            toolCalls: [
              // Gemini gave no id for this one: the adapter made `call_1` up and must not send it.
              { id: 'call_1', name: 'lookup_player', arguments: '{"player_id":"7"}' },
              // Gemini's own id goes back with the call and its response.
              { id: 'fc_9Yk2', name: 'lookup_player', arguments: '{"player_id": "9"' },
            ],
          },
          { role: 'tool', callId: 'call_1', name: 'lookup_player', content: '{"name":"Ana"}' },
          { role: 'tool', callId: 'fc_9Yk2', name: 'lookup_player', content: 'invalid_arguments_json: …', failed: true },
        ],
      }),
    );
    expect(body().tools).toEqual([{ functionDeclarations: [{ name: 'lookup_player', description: 'Find a player by id.', parametersJsonSchema: parameters }] }]);
    expect(body().toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(body().contents).toEqual([
      { role: 'user', parts: [{ text: 'Who are 7 and 9?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking both.' },
          { functionCall: { name: 'lookup_player', args: { player_id: '7' } } },
          // Broken JSON arguments cannot be sent as Gemini's args object: `{}`.
          { functionCall: { id: 'fc_9Yk2', name: 'lookup_player', args: {} } },
        ],
      },
      {
        // The results of one batch go back together, in one user content.
        role: 'user',
        parts: [
          { functionResponse: { name: 'lookup_player', response: { result: '{"name":"Ana"}' } } },
          // A failed call's result goes back as Gemini's error response.
          { functionResponse: { id: 'fc_9Yk2', name: 'lookup_player', response: { error: 'invalid_arguments_json: …' } } },
        ],
      },
    ]);
  });

  it.each([
    ['auto', 'AUTO'],
    ['required', 'ANY'],
    ['none', 'NONE'],
  ] as const)('maps toolChoice %s to function calling mode %s', async (choice, mode) => {
    server.reply(json(response([text('ok')], 'STOP')));
    await gemini().complete(request({ tools: [{ name: 'noop', description: 'Nothing.', parameters: { type: 'object' } }], toolChoice: choice }));
    expect(body().toolConfig).toEqual({ functionCallingConfig: { mode } });
  });

  it('sends thinking as thinkingConfig', async () => {
    server.reply(json(response([text('ok')], 'STOP')));
    await gemini({ thinking: { budgetTokens: 1024, includeThoughts: true } }).complete(request());
    expect(body().generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
  });

  it('sends a call back with the thought signature it came with', async () => {
    const provider = gemini();
    server.reply(json(response([functionCall('lookup_player', { player_id: '7' }, { thoughtSignature: SIGNATURE })], 'STOP', usage(50, 12))));
    const first = await provider.complete(request());
    server.reply(json(response([text('Ana.')], 'STOP', usage(70, 2))));
    await provider.complete(
      request({
        messages: [
          ...request().messages,
          { role: 'assistant', content: '', toolCalls: first.toolCalls! },
          { role: 'tool', callId: first.toolCalls![0]!.id, name: 'lookup_player', content: '{"name":"Ana"}' },
        ],
      }),
    );
    expect(body(1).contents[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { name: 'lookup_player', args: { player_id: '7' } }, thoughtSignature: SIGNATURE }],
    });
  });

  it.each([
    ['gemini-3-flash-preview', 'the skip sentinel', 'skip_thought_signature_validator'],
    ['gemini-2.5-flash', 'nothing', undefined],
  ])('on %s, a call whose signature was lost carries %s', async (model, _what, expected) => {
    server.reply(json(response([text('Ana.')], 'STOP')));
    await gemini({ model }).complete(
      request({
        messages: [
          { role: 'user', content: 'Who is 7?' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup_player', arguments: '{"player_id":"7"}' }] },
          { role: 'tool', callId: 'c1', name: 'lookup_player', content: 'Ana' },
        ],
      }),
    );
    expect(body().contents[1]!.parts[0]!['thoughtSignature']).toBe(expected);
  });

  it('takes comma-separated keys from GOOGLE_API_KEY, else GEMINI_API_KEY', async () => {
    vi.stubEnv('GOOGLE_API_KEY', '');
    vi.stubEnv('GEMINI_API_KEY', `${KEY}, ${KEY_2}`);
    server.reply(json(response([text('a')], 'STOP')), json(response([text('b')], 'STOP')));
    const provider = geminiProvider({ model: MODEL, baseURL: server.url });
    await provider.complete(request());
    await provider.complete(request());
    expect(server.requests.map((sent) => sent.headers['x-goog-api-key'])).toEqual([KEY, KEY_2]);
  });

  it('refuses bad configuration before any call', () => {
    vi.stubEnv('GOOGLE_API_KEY', '');
    vi.stubEnv('GEMINI_API_KEY', '');
    expect(() => geminiProvider({ model: MODEL })).toThrow(/GOOGLE_API_KEY or GEMINI_API_KEY/);
    expect(() => gemini({ headers: { 'X-Goog-Api-Key': KEY } })).toThrow(ConfigError);
    expect(() => gemini({ thinking: { budgetTokens: 1.5 } })).toThrow(/budgetTokens/);
  });
});

describe('gemini: responses', () => {
  it('completes text with usage', async () => {
    server.reply(json(response([text('Player 7 is Ana.')], 'STOP', usage(24, 9))));
    expect(await gemini().complete(request())).toEqual({
      text: 'Player 7 is Ana.',
      finishReason: 'stop',
      usage: { inputTokens: 24, outputTokens: 9, totalTokens: 33 },
    });
  });

  it('streams text as it arrives over CRLF-framed SSE, then finish with the last usage', async () => {
    server.reply(sse(STREAM_TEXT));
    const events = await collect(gemini().stream!(request()));
    expect(events.slice(0, -1)).toEqual([
      { type: 'text', text: 'Player 7 is ' },
      { type: 'text', text: 'Ana, on the red' },
      { type: 'text', text: ' team.' },
    ]);
    expect(finished(events)).toEqual({
      text: 'Player 7 is Ana, on the red team.',
      finishReason: 'stop',
      usage: { inputTokens: 24, outputTokens: 9, totalTokens: 33 },
    });
  });

  it('reports an <ACTION> answer stopped at </ACTION> as stop_sequence, streamed or not', async () => {
    server.reply(sse(STREAM_ACTION), json(whole(STREAM_ACTION)));
    const streamed = finished(await collect(gemini().stream!(request({ stop: ['</ACTION>'] }))));
    const completed = await gemini().complete(request({ stop: ['</ACTION>'] }));
    for (const answer of [streamed, completed]) {
      expect(answer).toEqual({
        text: 'Checking.\n<ACTION><lookup_player><player_id>7</player_id></lookup_player>\n',
        finishReason: 'stop_sequence',
        stopSequence: '</ACTION>',
        usage: { inputTokens: 130, outputTokens: 21, totalTokens: 151 },
      });
    }
  });

  it.each([
    ['no </ACTION> stop sequence', 'Checking.\n<ACTION><lookup_player>', undefined],
    ['a closed block', 'Checking.\n<ACTION><lookup_player><player_id>7</player_id></lookup_player></ACTION>', ['</ACTION>']],
    ['an opener only inside a code fence', 'Like this:\n```\n<ACTION>\n```', ['</ACTION>']],
  ])('keeps a normal stop with %s', async (_case, answer, stop) => {
    server.reply(json(response([text(answer)], 'STOP')));
    const result = await gemini().complete(request(stop === undefined ? {} : { stop }));
    expect(result.finishReason).toBe('stop');
    expect(result.stopSequence).toBeUndefined();
  });

  it('returns a native call whole, with the id Gemini gave', async () => {
    server.reply(json(response([functionCall('lookup_player', { player_id: '7' }, { id: 'fc_2kq8X1', thoughtSignature: SIGNATURE })], 'STOP', usage(60, 15, 40))));
    expect(await gemini().complete(request())).toEqual({
      text: '',
      toolCalls: [{ id: 'fc_2kq8X1', name: 'lookup_player', arguments: '{"player_id":"7"}' }],
      finishReason: 'tool_calls',
      usage: { inputTokens: 60, outputTokens: 55, totalTokens: 115 },
    });
  });

  it('streams parallel calls as one whole delta each, by index, with generated ids', async () => {
    server.reply(sse(STREAM_PARALLEL));
    const events = await collect(gemini().stream!(request()));
    expect(events.slice(0, -1)).toEqual([
      { type: 'text', text: 'Checking both.' },
      { type: 'tool_call_delta', index: 0, id: 'call_1', name: 'lookup_player', argumentsDelta: '{"player_id":"7"}' },
      { type: 'tool_call_delta', index: 1, id: 'call_2', name: 'lookup_player', argumentsDelta: '{"player_id":"9"}' },
    ]);
    expect(finished(events)).toEqual({
      text: 'Checking both.',
      toolCalls: [
        { id: 'call_1', name: 'lookup_player', arguments: '{"player_id":"7"}' },
        { id: 'call_2', name: 'lookup_player', arguments: '{"player_id":"9"}' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 88, outputTokens: 30, totalTokens: 118 },
    });
  });

  it('streams thought parts as reasoning, never as text, and counts thinking as output', async () => {
    server.reply(sse(STREAM_THINKING));
    const events = await collect(gemini({ thinking: { includeThoughts: true } }).stream!(request()));
    expect(events.slice(0, -1)).toEqual([
      { type: 'reasoning', text: '**Finding the player**\nThe roster says 7 ' },
      { type: 'reasoning', text: 'is Ana.' },
      { type: 'text', text: 'Ana.' },
    ]);
    const answer = { text: 'Ana.', finishReason: 'stop', usage: { inputTokens: 40, outputTokens: 59, totalTokens: 99 } };
    expect(finished(events)).toEqual(answer);
    server.reply(json(whole(STREAM_THINKING)));
    expect(await gemini({ thinking: { includeThoughts: true } }).complete(request())).toEqual(answer);
  });

  it.each([
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'error'],
    ['OTHER', 'error'],
  ])('maps finishReason %s to %s', async (wire, expected) => {
    server.reply(json(response(wire === 'MALFORMED_FUNCTION_CALL' ? [] : [text('Partial')], wire, usage(20, 5))));
    expect((await gemini().complete(request())).finishReason).toBe(expected);
  });

  it('reports a blocked prompt as content_filter, streamed or not', async () => {
    server.reply(json(BLOCKED), sse([BLOCKED]));
    const completed = await gemini().complete(request());
    const streamed = finished(await collect(gemini().stream!(request())));
    for (const answer of [completed, streamed]) {
      expect(answer).toEqual({ text: '', finishReason: 'content_filter', usage: { inputTokens: 14, outputTokens: 0, totalTokens: 14 } });
    }
  });

  it('passes arguments relayed as text through untouched, broken or not', async () => {
    server.reply(json(response([functionCall('lookup_player', '{"player_id": "7"')], 'STOP')));
    const result = await gemini().complete(request());
    expect(result.toolCalls).toEqual([{ id: 'call_1', name: 'lookup_player', arguments: '{"player_id": "7"' }]);
  });
});

describe('gemini: faults', () => {
  it('turns 429 RESOURCE_EXHAUSTED into rate_limit with the RetryInfo delay', async () => {
    server.reply(json(RATE_LIMITED, 429), json(RATE_LIMITED, 429));
    for (const call of [() => gemini().complete(request()), () => collect(gemini().stream!(request()))]) {
      const error = await failure(call());
      expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, retryAfterMs: 12_000, status: 429 });
      expect(error.message).toMatch(/RESOURCE_EXHAUSTED: You exceeded your current quota/);
    }
    // One request each: the client itself never retried.
    expect(server.requests).toHaveLength(2);
  });

  it('turns 500 into a retryable server error', async () => {
    server.reply(json(INTERNAL, 500));
    expect(await failure(collect(gemini().stream!(request())))).toMatchObject({ kind: 'server', retryable: true, status: 500 });
    expect(server.requests).toHaveLength(1);
  });

  it('turns a connection reset into a retryable network error', async () => {
    server.reply({ kind: 'reset' }, { kind: 'reset' });
    expect(await failure(gemini().complete(request()))).toMatchObject({ kind: 'network', retryable: true });
    expect(await failure(collect(gemini().stream!(request())))).toMatchObject({ kind: 'network', retryable: true });
  });

  it('turns a stream cut mid-<ACTION> into a network error after the text it showed', async () => {
    server.reply(sse(STREAM_ACTION, { cutAfter: 1 }));
    const seen: StreamEvent[] = [];
    const error = await failure(
      (async () => {
        for await (const event of gemini().stream!(request({ stop: ['</ACTION>'] }))) seen.push(event);
      })(),
    );
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(seen).toEqual([{ type: 'text', text: 'Checking.\n<ACTION><lookup_pla' }]);
  });

  it('treats a stream that ends without a finish reason as cut short', async () => {
    server.reply(sse(STREAM_TEXT.slice(0, 2)));
    const error = await failure(collect(gemini().stream!(request())));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
    expect(error.message).toMatch(/without a finish reason/);
  });

  it('turns a 400 that is not about the key into a bad_request that is not retried', async () => {
    server.reply(json(BAD_SCHEMA, 400), json(response([text('ok')], 'STOP')));
    const provider = gemini();
    expect(await failure(provider.complete(request()))).toMatchObject({ kind: 'bad_request', retryable: false, status: 400 });
    // The key was not set aside.
    await provider.complete(request());
    expect(server.requests[1]!.headers['x-goog-api-key']).toBe(KEY);
  });

  it('times out a hung response and a hung stream', async () => {
    server.reply({ kind: 'hang' }, sse(STREAM_TEXT, { hangAfter: 1 }));
    const provider = gemini({ timeoutMs: 100 });
    expect(await failure(provider.complete(request()))).toMatchObject({ kind: 'timeout', retryable: true });
    expect(await failure(collect(provider.stream!(request())))).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('aborts mid-stream when the caller aborts', async () => {
    server.reply(sse(STREAM_TEXT, { hangAfter: 1 }));
    const controller = new AbortController();
    const events = gemini().stream!(request({ signal: controller.signal }))[Symbol.asyncIterator]();
    expect((await events.next()).value).toEqual({ type: 'text', text: 'Player 7 is ' });
    controller.abort();
    expect(await failure(events.next())).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it.each([
    ['400 API_KEY_INVALID', json(KEY_INVALID, 400)],
    ['403 PERMISSION_DENIED', json({ error: { code: 403, message: 'Permission denied: Consumer has been suspended.', status: 'PERMISSION_DENIED' } }, 403)],
  ])('sets a refused key aside (%s) and the next key takes over', async (_case, refusal) => {
    server.reply(refusal, json(response([text('Ana.')], 'STOP')), json(response([text('Bo.')], 'STOP')));
    const provider = gemini({ apiKey: undefined, apiKeys: [KEY, KEY_2] });
    const error = await failure(provider.complete(request()));
    expect(error).toMatchObject({ kind: 'auth', retryable: true });
    expect(error.message).toMatch(/key 1 of 2 refused/);
    expect((await provider.complete(request())).text).toBe('Ana.');
    expect((await provider.complete(request())).text).toBe('Bo.');
    expect(server.requests.map((sent) => sent.headers['x-goog-api-key'])).toEqual([KEY, KEY_2, KEY_2]);
  });

  it('fails for good once every key was refused', async () => {
    server.reply(json(KEY_INVALID, 400));
    expect(await failure(gemini().complete(request()))).toMatchObject({ kind: 'auth', retryable: false });
  });
});

describe('gemini: an agent on the wire', () => {
  const players: Record<string, string> = { '7': 'Ana', '9': 'Bo' };
  const lookupPlayer = defineTool({
    name: 'lookup_player',
    description: 'Find a player by id.',
    parameters: { type: 'object', properties: { player_id: { type: 'string' } }, required: ['player_id'], additionalProperties: false },
    readOnly: true,
    execute: ({ player_id }) => ({ name: players[player_id as string] ?? null }),
  });

  async function run(provider: Provider, protocol: 'xml' | 'native', stream: boolean, prompt: string) {
    const bus = createBus({ ids: sequentialIds(), clock: steppedClock(1_000, 1) });
    const events = recordEvents(bus);
    const agent = createAgent({ name: 'referee', instructions: 'You are the referee.', provider, tools: [lookupPlayer], protocol, stream, bus });
    const result = await agent.run(prompt);
    return { result, events: normalizeEvents(events.all) };
  }

  /** The same exchange twice, over the wire and scripted: the bus must not tell them apart. */
  async function compare(protocol: 'xml' | 'native', stream: boolean, wire: Record<string, unknown>[][], script: ScriptedReply[], prompt: string) {
    server.reply(...wire.map((chunks) => (stream ? sse(chunks) : json(whole(chunks)))));
    const overWire = await run(gemini(), protocol, stream, prompt);
    const scripted = scriptedProvider(script, { stream });
    const offline = await run(scripted, protocol, stream, prompt);
    scripted.assertConsumed();
    expect(overWire.events).toEqual(offline.events);
    expect(server.requests).toHaveLength(scripted.requests.length);
    // The system prompt the scripted brain got is the one Gemini got.
    expect(body(0).systemInstruction).toEqual({ parts: [{ text: scripted.requests[0]!.messages[0]!.content }] });
    return overWire;
  }

  const FINAL = [response([text('Player 7 is Ana.')], 'STOP', usage(170, 6))];

  it.each([true, false])('native calls (stream: %s) give the same events as the scripted provider', async (stream) => {
    const { result, events } = await compare(
      'native',
      stream,
      [STREAM_PARALLEL, [response([text('Ana and Bo.')], 'STOP', usage(140, 4))]],
      [
        {
          text: 'Checking both.',
          toolCalls: [
            { id: 'call_1', name: 'lookup_player', arguments: '{"player_id":"7"}' },
            { id: 'call_2', name: 'lookup_player', arguments: '{"player_id":"9"}' },
          ],
          usage: { inputTokens: 88, outputTokens: 30, totalTokens: 118 },
        },
        { text: 'Ana and Bo.', usage: { inputTokens: 140, outputTokens: 4, totalTokens: 144 } },
      ],
      'Who are 7 and 9?',
    );
    expect(result).toMatchObject({ reason: 'final_answer', text: 'Ana and Bo.', usage: { totalTokens: 262 } });
    expect(events.filter((event) => event.type === 'tool.completed')).toHaveLength(2);
    expect(events.some((event) => event.type === 'llm.tool_call.delta')).toBe(stream);
    // Round 2 carries both results back in one user content, without the made-up ids.
    expect(body(1).contents.at(-1)).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'lookup_player', response: { result: expect.stringContaining('Ana') } } },
        { functionResponse: { name: 'lookup_player', response: { result: expect.stringContaining('Bo') } } },
      ],
    });
  });

  it.each([true, false])('an <ACTION> block stopped at </ACTION> (stream: %s) runs as with the scripted provider', async (stream) => {
    const { result, events } = await compare(
      'xml',
      stream,
      [STREAM_ACTION, FINAL],
      [
        {
          text: 'Checking.\n<ACTION><lookup_player><player_id>7</player_id></lookup_player>\n',
          finishReason: 'stop_sequence',
          stopSequence: '</ACTION>',
          usage: { inputTokens: 130, outputTokens: 21, totalTokens: 151 },
        },
        { text: 'Player 7 is Ana.', usage: { inputTokens: 170, outputTokens: 6, totalTokens: 176 } },
      ],
      'Who is player 7?',
    );
    expect(result).toMatchObject({ reason: 'final_answer', text: 'Player 7 is Ana.' });
    expect(events.map((event) => event.type)).toContain('tool.completed');
    expect(body(0).generationConfig).toMatchObject({ stopSequences: ['</ACTION>'] });
  });

  it('retries a stream cut mid-<ACTION> and a 429 through the agent; the partial block never runs', async () => {
    const soon = { error: { ...RATE_LIMITED.error, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.010s' }] } };
    server.reply(sse(STREAM_ACTION, { cutAfter: 1 }), json(soon, 429), sse(STREAM_ACTION), sse(FINAL));
    const bus = createBus({ ids: sequentialIds(), clock: steppedClock(1_000, 1) });
    const events = recordEvents(bus);
    const agent = createAgent({
      name: 'referee',
      provider: gemini(),
      tools: [lookupPlayer],
      bus,
      modelRetry: { attempts: 3, backoffMs: 1 },
    });
    const result = await agent.run('Who is player 7?');
    expect(result).toMatchObject({ reason: 'final_answer', text: 'Player 7 is Ana.' });
    expect(events.filter('llm.error').map((event) => event.data)).toMatchObject([
      { kind: 'network', retryable: true, attempt: 1 },
      { kind: 'rate_limit', retryable: true, attempt: 2 },
    ]);
    expect(events.find('llm.superseded')!.data).toMatchObject({ round: 1, attempt: 1 });
    expect(events.filter('tool.completed')).toHaveLength(1);
    expect(server.requests).toHaveLength(4);
  });
});
