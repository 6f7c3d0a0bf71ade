import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { aiSdkProvider } from '../../src/llm/ai-sdk/index.js';
import type { AiSdkLanguageModel } from '../../src/llm/ai-sdk/index.js';
import {
  callParts,
  collect,
  generated,
  lookupPlayer,
  reason,
  request,
  stallingStream,
  streamed,
  textParts,
  v2Model,
  v3Usage,
} from './ai-sdk-helpers.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PNG_BASE64 = Buffer.from(PNG).toString('base64');
const ACTION_TEXT = 'I will look that up.\n<ACTION>\n<lookup_player>\n<id>7</id>\n</lookup_player>\n';

function textModel(text: string, finishReason = reason('stop')) {
  return new MockLanguageModelV3({ doGenerate: generated([{ type: 'text', text }], finishReason) });
}

describe('aiSdkProvider: what it sends', () => {
  it('maps the conversation, tools, toolChoice, stop, temperature, token limit, signal, headers and provider options', async () => {
    const model = textModel('Ana.');
    const signalled = new AbortController();
    await aiSdkProvider(model, { headers: { 'x-team': 'rovers' }, providerOptions: { openai: { parallelToolCalls: false } } }).complete(
      request({
        messages: [
          { role: 'system', content: 'You are the referee.' },
          { role: 'user', content: 'Who is player 7?', images: [{ data: PNG, mediaType: 'image/png' }] },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup_player', arguments: '{"id":"7"}' }, { id: 'c2', name: 'lookup_player', arguments: '{"id": 7' }] },
          { role: 'tool', callId: 'c1', name: 'lookup_player', content: '{"name":"Ana"}', images: [{ data: PNG, mediaType: 'image/png' }] },
          { role: 'tool', callId: 'c2', name: 'lookup_player', content: 'error: invalid JSON', failed: true },
          { role: 'system', content: 'Summary of earlier turns.' },
          { role: 'assistant', content: 'Checking.' },
        ],
        tools: [lookupPlayer],
        toolChoice: 'required',
        stop: ['</ACTION>'],
        temperature: 0.2,
        maxTokens: 512,
        signal: signalled.signal,
      }),
    );
    const sent = model.doGenerateCalls[0]!;
    expect(sent).toEqual({
      prompt: [
        // System messages join at the front: several providers refuse one later in the conversation.
        { role: 'system', content: 'You are the referee.\n\nSummary of earlier turns.' },
        { role: 'user', content: [{ type: 'text', text: 'Who is player 7?' }, { type: 'file', data: PNG, mediaType: 'image/png' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup_player', input: { id: '7' } },
            // Broken JSON the model wrote goes back as {}: the specification wants an object.
            { type: 'tool-call', toolCallId: 'c2', toolName: 'lookup_player', input: {} },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'lookup_player',
              output: { type: 'content', value: [{ type: 'text', text: '{"name":"Ana"}' }, { type: 'image-data', data: PNG_BASE64, mediaType: 'image/png' }] },
            },
            { type: 'tool-result', toolCallId: 'c2', toolName: 'lookup_player', output: { type: 'error-text', value: 'error: invalid JSON' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] },
      ],
      tools: [{ type: 'function', name: 'lookup_player', description: 'Find a player by id.', inputSchema: lookupPlayer.parameters }],
      toolChoice: { type: 'required' },
      stopSequences: ['</ACTION>'],
      temperature: 0.2,
      maxOutputTokens: 512,
      abortSignal: expect.any(AbortSignal),
      headers: { 'x-team': 'rovers' },
      providerOptions: { openai: { parallelToolCalls: false } },
    });
    // The signal the model gets follows the run's.
    signalled.abort();
    expect(sent.abortSignal!.aborted).toBe(true);
  });

  it.each(['auto', 'none'] as const)('maps toolChoice %s, and sends no tools or toolChoice for the XML protocol', async (choice) => {
    const model = textModel('Ana.');
    const provider = aiSdkProvider(model);
    await provider.complete(request({ tools: [lookupPlayer], toolChoice: choice }));
    await provider.complete(request({ stop: ['</ACTION>'] }));
    expect(model.doGenerateCalls[0]!.toolChoice).toEqual({ type: choice });
    expect(model.doGenerateCalls[1]).not.toHaveProperty('tools');
    expect(model.doGenerateCalls[1]).not.toHaveProperty('toolChoice');
    expect(model.doGenerateCalls[1]!.stopSequences).toEqual(['</ACTION>']);
  });

  it('names itself after the model, and takes a name of its own', () => {
    const model = new MockLanguageModelV3({ provider: 'openai.chat', modelId: 'gpt-4o-mini' });
    expect(aiSdkProvider(model)).toMatchObject({ name: 'openai.chat', model: 'gpt-4o-mini' });
    expect(aiSdkProvider(model, { name: 'openai' }).name).toBe('openai');
  });

  it.each([
    ['openai.chat', { imagesInUserMessages: true, imagesInToolResults: false }],
    ['openai.responses', { imagesInUserMessages: true, imagesInToolResults: true }],
    ['anthropic.messages', { imagesInUserMessages: true, imagesInToolResults: true }],
    ['google.generative-ai', { imagesInUserMessages: true, imagesInToolResults: true }],
    ['ollama.chat', { imagesInUserMessages: false, imagesInToolResults: false }],
    ['mock-provider', { imagesInUserMessages: false, imagesInToolResults: false }],
  ])('takes images from %s models as their package sends them', (id, accepts) => {
    expect(aiSdkProvider(new MockLanguageModelV3({ provider: id })).accepts).toEqual(accepts);
  });

  it('lets accepts override the default', () => {
    const provider = aiSdkProvider(new MockLanguageModelV3({ provider: 'ollama.chat' }), { accepts: { imagesInUserMessages: true } });
    expect(provider.accepts).toEqual({ imagesInUserMessages: true, imagesInToolResults: false });
  });

  it('refuses what is not a model it can drive, before any call', () => {
    expect(() => aiSdkProvider('openai/gpt-4o' as unknown as AiSdkLanguageModel)).toThrow(/pass a language model object, e\.g\. openai\('gpt-4o-mini'\)/);
    expect(() => aiSdkProvider(undefined as unknown as AiSdkLanguageModel)).toThrow(ConfigError);
    const v4 = { ...new MockLanguageModelV3(), specificationVersion: 'v4' } as unknown as AiSdkLanguageModel;
    expect(() => aiSdkProvider(v4)).toThrow(/specification v4; troupe speaks v2 \(AI SDK 5: @ai-sdk\/\* 2\.x\) and v3 .*need Node 22/);
    const v1 = { specificationVersion: 'v1', provider: 'old', modelId: 'm', doGenerate() {}, doStream() {} } as unknown as AiSdkLanguageModel;
    expect(() => aiSdkProvider(v1)).toThrow(/specification v1/);
    const noStream = { specificationVersion: 'v3', provider: 'p', modelId: 'm', doGenerate() {} } as unknown as AiSdkLanguageModel;
    expect(() => aiSdkProvider(noStream)).toThrow(/no doStream\(\) method/);
    expect(() => aiSdkProvider(new MockLanguageModelV3(), { timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
  });
});

describe('aiSdkProvider: complete', () => {
  it('answers text with its usage', async () => {
    const response = await aiSdkProvider(textModel('Player 7 is Ana.')).complete(request());
    expect(response).toEqual({ text: 'Player 7 is Ana.', finishReason: 'stop', usage: { inputTokens: 82, outputTokens: 17, totalTokens: 99 } });
  });

  it('returns native calls with their input as JSON text, in order, broken JSON untouched', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: generated(
        [
          { type: 'reasoning', text: 'The roster knows.' },
          { type: 'text', text: 'Checking both.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup_player', input: '{"id":"7"}' },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'lookup_player', input: '{"id": "8", ' },
          { type: 'tool-call', toolCallId: 'c3', toolName: 'list_players', input: '' },
          // A call the provider ran itself (its web search): troupe runs none of those.
          { type: 'tool-call', toolCallId: 'ws', toolName: 'web_search', input: '{}', providerExecuted: true },
        ],
        reason('tool-calls', 'tool_calls'),
      ),
    });
    expect(await aiSdkProvider(model).complete(request({ tools: [lookupPlayer] }))).toEqual({
      text: 'Checking both.',
      finishReason: 'tool_calls',
      toolCalls: [
        { id: 'c1', name: 'lookup_player', arguments: '{"id":"7"}' },
        { id: 'c2', name: 'lookup_player', arguments: '{"id": "8", ' },
        { id: 'c3', name: 'list_players', arguments: '{}' },
      ],
      usage: { inputTokens: 82, outputTokens: 17, totalTokens: 99 },
    });
  });

  it.each([
    ['length', 'length', 'length'],
    ['content-filter', 'content_filter', 'content_filter'],
    ['content-filter', 'refusal', 'refusal'],
    ['error', 'error', 'error'],
    ['other', 'pause_turn', 'stop'],
    ['stop', 'end_turn', 'stop'],
  ] as const)('maps finish reason %s (raw %s) to %s', async (unified, raw, expected) => {
    const response = await aiSdkProvider(textModel('Hm.', reason(unified, raw))).complete(request());
    expect(response.finishReason).toBe(expected);
  });

  it('ends a turn of calls that a model finished with stop as tool_calls', async () => {
    const model = new MockLanguageModelV3({ doGenerate: generated([{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup_player', input: '{}' }]) });
    expect((await aiSdkProvider(model).complete(request())).finishReason).toBe('tool_calls');
  });

  it('reports an <ACTION> answer stopped at </ACTION> as stop_sequence, and only when </ACTION> was asked for', async () => {
    const provider = aiSdkProvider(textModel(ACTION_TEXT));
    expect(await provider.complete(request({ stop: ['</ACTION>'] }))).toMatchObject({ finishReason: 'stop_sequence', stopSequence: '</ACTION>' });
    expect(await provider.complete(request())).toMatchObject({ finishReason: 'stop' });
    // A whole block, closer written, is a plain stop.
    const closed = aiSdkProvider(textModel(`${ACTION_TEXT}</ACTION>`));
    expect(await closed.complete(request({ stop: ['</ACTION>'] }))).toMatchObject({ finishReason: 'stop' });
  });

  it("takes the sequence Anthropic names in its metadata, or the one asked for", async () => {
    const named = new MockLanguageModelV3({
      doGenerate: generated([{ type: 'text', text: 'Done' }], reason('stop', 'stop_sequence'), v3Usage(5, 1), {
        providerMetadata: { anthropic: { stopSequence: '###' } },
      }),
    });
    expect(await aiSdkProvider(named).complete(request({ stop: ['###', '</ACTION>'] }))).toMatchObject({ finishReason: 'stop_sequence', stopSequence: '###' });
    const unnamed = new MockLanguageModelV3({ doGenerate: generated([{ type: 'text', text: 'Done' }], reason('stop', 'stop_sequence')) });
    expect(await aiSdkProvider(unnamed).complete(request({ stop: ['###'] }))).toMatchObject({ finishReason: 'stop_sequence', stopSequence: '###' });
  });

  it.each([
    ['totals', v3Usage(40, 12), { inputTokens: 40, outputTokens: 12, totalTokens: 52 }],
    ['only the output', v3Usage(undefined, 12), { inputTokens: 0, outputTokens: 12, totalTokens: 12 }],
    [
      'parts without totals',
      { inputTokens: { total: undefined, noCache: 30, cacheRead: 10, cacheWrite: undefined }, outputTokens: { total: undefined, text: 8, reasoning: 4 } },
      { inputTokens: 40, outputTokens: 12, totalTokens: 52 },
    ],
    ['no count at all', v3Usage(undefined, undefined), undefined],
  ] as const)('reports usage from %s', async (_case, usage, expected) => {
    const model = new MockLanguageModelV3({ doGenerate: generated([{ type: 'text', text: 'Hi.' }], reason('stop'), usage) });
    expect((await aiSdkProvider(model).complete(request())).usage).toEqual(expected);
  });
});

describe('aiSdkProvider: stream', () => {
  it('streams text as it arrives, then finishes with the usage', async () => {
    const model = new MockLanguageModelV3({ doStream: streamed(textParts(['Player 7', ' is', ' Ana.'], reason('stop'), v3Usage(40, 9))) });
    expect(await collect(aiSdkProvider(model).stream!(request()))).toEqual([
      { type: 'text', text: 'Player 7' },
      { type: 'text', text: ' is' },
      { type: 'text', text: ' Ana.' },
      { type: 'finish', response: { text: 'Player 7 is Ana.', finishReason: 'stop', usage: { inputTokens: 40, outputTokens: 9, totalTokens: 49 } } },
    ]);
  });

  it('streams reasoning apart from the reply', async () => {
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'The roster' },
      { type: 'reasoning-delta', id: 'r', delta: ' says Ana.' },
      { type: 'reasoning-end', id: 'r' },
      ...textParts(['Ana.']),
    ];
    const events = await collect(aiSdkProvider(new MockLanguageModelV3({ doStream: streamed(parts) })).stream!(request()));
    expect(events.slice(0, 3)).toEqual([
      { type: 'reasoning', text: 'The roster' },
      { type: 'reasoning', text: ' says Ana.' },
      { type: 'text', text: 'Ana.' },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'finish', response: { text: 'Ana.' } });
  });

  it('reports a streamed <ACTION> answer stopped at </ACTION> as stop_sequence', async () => {
    const model = new MockLanguageModelV3({ doStream: streamed(textParts(['I will look that up.\n<ACTION>', '\n<lookup_player>\n<id>7</id>\n</lookup_player>\n'])) });
    const events = await collect(aiSdkProvider(model).stream!(request({ stop: ['</ACTION>'] })));
    expect(events.at(-1)).toMatchObject({ type: 'finish', response: { text: ACTION_TEXT, finishReason: 'stop_sequence', stopSequence: '</ACTION>' } });
  });

  it('streams parallel calls whose input deltas interleave, told apart by id', async () => {
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'tool-input-start', id: 'c1', toolName: 'lookup_player' },
      { type: 'tool-input-start', id: 'c2', toolName: 'lookup_team' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"id"' },
      { type: 'tool-input-delta', id: 'c2', delta: '{"team"' },
      { type: 'tool-input-delta', id: 'c2', delta: ': "Rovers"}' },
      { type: 'tool-input-delta', id: 'c1', delta: ': "7"}' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup_player', input: '{"id": "7"}' },
      { type: 'tool-input-end', id: 'c2' },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'lookup_team', input: '{"team": "Rovers"}' },
      { type: 'finish', finishReason: reason('tool-calls', 'tool_calls'), usage: v3Usage(101, 42) },
    ];
    const events = await collect(aiSdkProvider(new MockLanguageModelV3({ doStream: streamed(parts) })).stream!(request({ tools: [lookupPlayer] })));
    expect(events).toEqual([
      { type: 'tool_call_delta', index: 0, id: 'c1', name: 'lookup_player', argumentsDelta: '' },
      { type: 'tool_call_delta', index: 1, id: 'c2', name: 'lookup_team', argumentsDelta: '' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{"id"' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '{"team"' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: ': "Rovers"}' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: ': "7"}' },
      {
        type: 'finish',
        response: {
          text: '',
          finishReason: 'tool_calls',
          toolCalls: [
            { id: 'c1', name: 'lookup_player', arguments: '{"id": "7"}' },
            { id: 'c2', name: 'lookup_team', arguments: '{"team": "Rovers"}' },
          ],
          usage: { inputTokens: 101, outputTokens: 42, totalTokens: 143 },
        },
      },
    ]);
  });

  it('takes a call sent whole (no input deltas) as one delta, and skips calls the provider ran itself', async () => {
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'tool-input-start', id: 'ws', toolName: 'web_search', providerExecuted: true },
      { type: 'tool-input-delta', id: 'ws', delta: '{"q":"Ana"}' },
      { type: 'tool-call', toolCallId: 'ws', toolName: 'web_search', input: '{"q":"Ana"}', providerExecuted: true },
      { type: 'tool-result', toolCallId: 'ws', toolName: 'web_search', result: { hits: 1 } },
      { type: 'tool-call', toolCallId: 'g1', toolName: 'lookup_player', input: '{"id":"7"}' },
      { type: 'finish', finishReason: reason('stop', 'STOP'), usage: v3Usage(10, 5) },
    ];
    const events = await collect(aiSdkProvider(new MockLanguageModelV3({ doStream: streamed(parts) })).stream!(request()));
    expect(events).toEqual([
      { type: 'tool_call_delta', index: 0, id: 'g1', name: 'lookup_player', argumentsDelta: '{"id":"7"}' },
      {
        type: 'finish',
        response: { text: '', finishReason: 'tool_calls', toolCalls: [{ id: 'g1', name: 'lookup_player', arguments: '{"id":"7"}' }], usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
      },
    ]);
  });

  it('passes broken streamed input through untouched', async () => {
    const parts = [...callParts('c1', 'lookup_player', ['{"id": "7", ', '"fields": ["name"']), { type: 'finish', finishReason: reason('tool-calls'), usage: v3Usage(9, 4) }] as LanguageModelV3StreamPart[];
    const events = await collect(aiSdkProvider(new MockLanguageModelV3({ doStream: streamed(parts) })).stream!(request()));
    expect(events.at(-1)).toMatchObject({ response: { toolCalls: [{ id: 'c1', arguments: '{"id": "7", "fields": ["name"' }] } });
  });

  it('lets a consumer stop early, cancelling the model stream', async () => {
    const { result, cancelled } = stallingStream(textParts(['One.', ' Two.']).slice(0, 4));
    const events = aiSdkProvider(new MockLanguageModelV3({ doStream: result })).stream!(request());
    for await (const event of events) {
      expect(event).toEqual({ type: 'text', text: 'One.' });
      break;
    }
    expect(cancelled()).toBe(true);
  });
});

describe('aiSdkProvider: a v2 model (AI SDK 5)', () => {
  it('completes with its flat usage and string finish reason, and sends tool images as media parts', async () => {
    const model = v2Model({
      generate: {
        content: [{ type: 'text', text: 'Ana.' }, { type: 'tool-call', toolCallId: 'c9', toolName: 'lookup_player', input: '{"id":"8"}' }],
        finishReason: 'tool-calls',
        usage: { inputTokens: 30, outputTokens: 6, totalTokens: 36 },
        warnings: [],
      },
    });
    const response = await aiSdkProvider(model).complete(
      request({
        messages: [
          { role: 'user', content: 'Look.' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'snap', arguments: '{}' }] },
          { role: 'tool', callId: 'c1', name: 'snap', content: 'A photo.', images: [{ data: PNG, mediaType: 'image/png' }] },
        ],
        tools: [lookupPlayer],
        toolChoice: 'auto',
      }),
    );
    expect(response).toEqual({
      text: 'Ana.',
      finishReason: 'tool_calls',
      toolCalls: [{ id: 'c9', name: 'lookup_player', arguments: '{"id":"8"}' }],
      usage: { inputTokens: 30, outputTokens: 6, totalTokens: 36 },
    });
    expect(model.calls[0]!.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'snap',
          output: { type: 'content', value: [{ type: 'text', text: 'A photo.' }, { type: 'media', data: PNG_BASE64, mediaType: 'image/png' }] },
        },
      ],
    });
    expect(model.calls[0]!.toolChoice).toEqual({ type: 'auto' });
  });

  it('streams, taking a missing total as the sum and an unknown finish as stop', async () => {
    const model = v2Model({
      stream: [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: '0' },
        { type: 'text-delta', id: '0', delta: 'Ana' },
        { type: 'text-delta', id: '0', delta: '.' },
        { type: 'text-end', id: '0' },
        { type: 'finish', finishReason: 'unknown', usage: { inputTokens: 12, outputTokens: 2, totalTokens: undefined } },
      ],
    });
    expect(await collect(aiSdkProvider(model).stream!(request()))).toEqual([
      { type: 'text', text: 'Ana' },
      { type: 'text', text: '.' },
      { type: 'finish', response: { text: 'Ana.', finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 2, totalTokens: 14 } } },
    ]);
  });
});
