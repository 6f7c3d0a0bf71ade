import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { toolResult, type Provider } from '../../src/index.js';
import { cassetteProvider, recordProvider } from '../../src/llm/index.js';
import { anthropicProvider } from '../../src/llm/anthropic/index.js';
import { geminiProvider } from '../../src/llm/gemini/index.js';
import { openaiProvider } from '../../src/llm/openai/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { normalizeEvents } from './normalize.js';
import { CALL_XML, PNG, PNG_BASE64, resultTool } from '../tools/rich-results-fixtures.js';
import * as anthropicWire from './transcripts/anthropic.js';
import * as geminiWire from './transcripts/gemini.js';
import { completion, call } from './transcripts/openai.js';
import { startWireServer, type WireServer } from './wire-server.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
  vi.stubEnv('OPENAI_BASE_URL', '');
});
afterEach(async () => {
  vi.unstubAllEnvs();
  expect(server.unexpected).toEqual([]);
  await server.close();
});

const chart = resultTool('chart', () =>
  toolResult([
    { type: 'text', text: 'Rainfall:' },
    { type: 'image', data: PNG, mediaType: 'image/png' },
  ]),
);

async function runAgent(provider: Provider, protocol: 'xml' | 'native'): Promise<Record<string, unknown>> {
  const { agent } = testAgent({ provider, tools: [chart], protocol, stream: false });
  const result = await agent.run('Show me the rainfall.');
  expect(result.reason).toBe('final_answer');
  expect(server.requests).toHaveLength(2);
  return server.requests[1]!.body as Record<string, unknown>;
}

const openai = (extra: Parameters<typeof openaiProvider>[0] extends infer T ? Partial<T> : never = {}) =>
  openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test-rich-1a2b3c4d', baseURL: `${server.url}/v1`, timeoutMs: 5_000, ...extra });
const anthropic = () => anthropicProvider({ model: anthropicWire.MODEL, apiKey: 'sk-ant-api03-test-rich-0000', baseURL: server.url, clock: () => 1_000 });
const gemini = (model: string) => geminiProvider({ model, apiKey: 'AIza-test-rich', baseURL: server.url, timeoutMs: 5_000, clock: () => 1_000 });

describe('rich results on the wire: OpenAI chat completions', () => {
  it('native: the tool message stays text, and a user message after it carries the image as a data URL', async () => {
    server.reply(
      { kind: 'json', body: completion({ tool_calls: [call('call_1', 'chart', '{}')] }, 'tool_calls') },
      { kind: 'json', body: completion({ content: 'Wet March.' }, 'stop') },
    );
    const body = await runAgent(openai(), 'native');
    const messages = body.messages as Record<string, unknown>[];
    expect(messages.at(-2)).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    expect(typeof messages.at(-2)!.content).toBe('string');
    expect(messages.at(-2)!.content).toContain('[image: image/png, 70 B, ref sha256:');
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'The images attached to the tool results above, in order.' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
      ],
    });
  });

  it('xml: the observation message carries its text and the image', async () => {
    server.reply({ kind: 'json', body: completion({ content: CALL_XML('chart') }, 'stop') }, { kind: 'json', body: completion({ content: 'Wet March.' }, 'stop') });
    const body = await runAgent(openai(), 'xml');
    const last = (body.messages as { role: string; content: { type: string; text?: string; image_url?: { url: string } }[] }[]).at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content[0]!.text).toMatch(/^<OBSERVATION>\nchart \(tester\/1\.1\.1\) completed:\nRainfall:\n\[image: image\/png, 70 B, ref sha256:[0-9a-f]{12}; attached\]/);
    expect(last.content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } });
  });

  it('a hand-built history with images on tool messages: one user message after the run of tool messages', async () => {
    server.reply({ kind: 'json', body: completion({ content: 'Seen.' }, 'stop') });
    const image = { data: PNG, mediaType: 'image/png' as const };
    await openai().complete({
      messages: [
        { role: 'user', content: 'Show both.' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'chart', arguments: '{}' }, { id: 'b', name: 'chart', arguments: '{}' }] },
        { role: 'tool', callId: 'a', name: 'chart', content: 'first', images: [image] },
        { role: 'tool', callId: 'b', name: 'chart', content: 'second', images: [image] },
        { role: 'user', content: 'And?' },
      ],
      signal: new AbortController().signal,
      round: 1,
      agent: 'tester',
    });
    const messages = (server.requests[0]!.body as { messages: { role: string; content: unknown }[] }).messages;
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user', 'user']);
    expect(messages[4]!.content).toHaveLength(3);
    expect(messages[5]).toEqual({ role: 'user', content: 'And?' });
  });

  it('a text-only model (accepts overridden) gets the placeholder and no image part', async () => {
    server.reply({ kind: 'json', body: completion({ content: CALL_XML('chart') }, 'stop') }, { kind: 'json', body: completion({ content: 'Wet March.' }, 'stop') });
    const body = await runAgent(openai({ accepts: { imagesInUserMessages: false } }), 'xml');
    const last = (body.messages as { content: unknown }[]).at(-1)!;
    expect(typeof last.content).toBe('string');
    expect(last.content).toContain('not shown: this model is not sent images');
    expect(JSON.stringify(body)).not.toContain(PNG_BASE64);
  });
});

describe('rich results on the wire: Anthropic messages', () => {
  const toolUse = {
    ...anthropicWire.textMessage,
    content: [{ type: 'tool_use', id: 'toolu_01Chart', name: 'chart', input: {}, caller: { type: 'direct' } }],
    stop_reason: 'tool_use',
  };

  it('native: the tool_result block holds the text and an image block', async () => {
    server.reply(anthropicWire.json(toolUse), anthropicWire.json(anthropicWire.textMessage));
    const body = await runAgent(anthropic(), 'native');
    const messages = body.messages as { role: string; content: unknown }[];
    const results = messages.at(-1)!;
    expect(results.role).toBe('user');
    expect(results.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01Chart',
        content: [
          { type: 'text', text: expect.stringMatching(/^chart \(toolu_01Chart\) completed:\nRainfall:\n\[image: image\/png, 70 B, ref sha256:[0-9a-f]{12}; attached\]$/) },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
        ],
      },
    ]);
  });

  it('xml: the observation is a user turn of a text block and an image block', async () => {
    server.reply(anthropicWire.json({ ...anthropicWire.textMessage, content: [{ type: 'text', text: CALL_XML('chart'), citations: null }] }), anthropicWire.json(anthropicWire.textMessage));
    const body = await runAgent(anthropic(), 'xml');
    const last = (body.messages as { role: string; content: { type: string }[] }[]).at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content.map((block) => block.type)).toEqual(['text', 'image']);
    expect(last.content[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } });
  });
});

describe('rich results on the wire: Gemini generateContent', () => {
  const path = (model: string) => `/v1beta/models/${model}:generateContent`;

  it('Gemini 2.5: the image goes as an inlineData part right after the functionResponse', async () => {
    server.reply(geminiWire.json(geminiWire.response([geminiWire.functionCall('chart', {}, { id: 'fc_1' })], 'STOP')), geminiWire.json(geminiWire.response([geminiWire.text('Wet March.')], 'STOP')));
    const body = await runAgent(gemini('gemini-2.5-flash'), 'native');
    expect(server.requests[1]!.path).toBe(path('gemini-2.5-flash'));
    const last = (body.contents as { role: string; parts: Record<string, unknown>[] }[]).at(-1)!;
    expect(last.role).toBe('user');
    expect(last.parts).toEqual([
      { functionResponse: { id: 'fc_1', name: 'chart', response: { result: expect.stringContaining('; attached]') } } },
      { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
    ]);
  });

  it('Gemini 3: the image goes inside the functionResponse (multimodal function responses)', async () => {
    server.reply(
      geminiWire.json(geminiWire.response([geminiWire.functionCall('chart', {}, { id: 'fc_1', thoughtSignature: geminiWire.SIGNATURE })], 'STOP')),
      geminiWire.json(geminiWire.response([geminiWire.text('Wet March.')], 'STOP')),
    );
    const body = await runAgent(gemini('gemini-3-pro-preview'), 'native');
    const last = (body.contents as { parts: { functionResponse?: Record<string, unknown> }[] }[]).at(-1)!;
    expect(last.parts).toHaveLength(1);
    expect(last.parts[0]!.functionResponse).toMatchObject({ id: 'fc_1', name: 'chart', parts: [{ inlineData: { mimeType: 'image/png', data: PNG_BASE64, displayName: 'image-1.png' } }] });
  });

  it('xml: the observation text and the image share the user turn', async () => {
    server.reply(geminiWire.json(geminiWire.response([geminiWire.text(CALL_XML('chart'))], 'STOP')), geminiWire.json(geminiWire.response([geminiWire.text('Wet March.')], 'STOP')));
    const body = await runAgent(gemini('gemini-2.5-flash'), 'xml');
    const last = (body.contents as { role: string; parts: Record<string, unknown>[] }[]).at(-1)!;
    expect(last.parts).toEqual([{ text: expect.stringContaining('<OBSERVATION>') }, { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }]);
  });
});

describe('rich results in cassettes', () => {
  it('replays a run whose tool returned an image: same events, small lines, the provider capabilities kept', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-cassette-')), 'tape.jsonl');
    const run = async (provider: Provider) => {
      const { agent, events } = testAgent({ provider, tools: [chart] });
      await agent.run('Show me the rainfall.');
      return normalizeEvents(events.all);
    };
    const live = scriptedProvider([CALL_XML('chart'), 'Wet March.'], { accepts: { imagesInUserMessages: true } });
    const recorded = await run(recordProvider(live, file));
    const replay = cassetteProvider(file);
    expect(replay.accepts).toEqual({ imagesInUserMessages: true });
    expect(await run(replay)).toEqual(recorded);
    replay.assertConsumed();
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('"images":[{"mediaType":"image/png","bytes":70,"sha256":"');
    expect(text).not.toContain('"0":137');
  });
});
