/**
 * Structured output on the wire: a native agent with an `output` schema, through each adapter's
 * official client against the local wire server, sends the schema in the provider's own form and
 * gets the answer back as `result.output`.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAgent, type Provider } from '../../src/index.js';
import { aiSdkProvider } from '../../src/llm/ai-sdk/index.js';
import { anthropicProvider } from '../../src/llm/anthropic/index.js';
import { geminiProvider } from '../../src/llm/gemini/index.js';
import { openaiProvider } from '../../src/llm/openai/index.js';
import * as anthropicWire from './transcripts/anthropic.js';
import * as geminiWire from './transcripts/gemini.js';
import { completion } from './transcripts/openai.js';
import { startWireServer, type WireServer } from './wire-server.js';

const VERDICT = {
  type: 'object',
  properties: { winner: { type: 'string', enum: ['red', 'blue'] }, score: { type: 'integer' } },
  required: ['winner', 'score'],
  additionalProperties: false,
} as const;
const ANSWER = '{"winner":"red","score":3}';

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

async function answer(provider: Provider): Promise<Record<string, unknown>> {
  const agent = createAgent({ name: 'judge', provider, protocol: 'native', output: VERDICT, stream: false });
  const result = await agent.run('Who won?');
  expect(result).toMatchObject({ reason: 'final_answer', output: { winner: 'red', score: 3 } });
  expect(server.requests).toHaveLength(1);
  return server.requests[0]!.body as Record<string, unknown>;
}

describe('structured output on the wire', () => {
  it('OpenAI: response_format json_schema, named, not strict', async () => {
    server.reply({ kind: 'json', body: completion({ content: ANSWER }, 'stop') });
    const body = await answer(openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test-output-1a2b3c4d', baseURL: `${server.url}/v1`, timeoutMs: 5_000 }));
    expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: VERDICT } });
  });

  it('Anthropic: output_config.format json_schema', async () => {
    server.reply(anthropicWire.json({ ...anthropicWire.textMessage, content: [{ type: 'text', text: ANSWER, citations: null }] }));
    const body = await answer(anthropicProvider({ model: anthropicWire.MODEL, apiKey: 'sk-ant-api03-test-output-0000', baseURL: server.url, clock: () => 1_000 }));
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: VERDICT } });
  });

  it('Gemini: responseMimeType application/json and responseJsonSchema', async () => {
    server.reply(geminiWire.json(geminiWire.response([geminiWire.text(ANSWER)], 'STOP')));
    const body = await answer(geminiProvider({ model: geminiWire.MODEL, apiKey: 'AIza-test-output', baseURL: server.url, timeoutMs: 5_000, clock: () => 1_000 }));
    expect(body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: VERDICT });
  });

  it('AI SDK (an OpenAI-compatible provider package): responseFormat json, as the package words it', async () => {
    server.reply({ kind: 'json', body: completion({ content: ANSWER }, 'stop') });
    const model = createOpenAICompatible({ name: 'local', baseURL: `${server.url}/v1`, apiKey: 'sk-local-test-key', supportsStructuredOutputs: true })('qwen2.5');
    const body = await answer(aiSdkProvider(model, { timeoutMs: 5_000 }));
    expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'output', schema: VERDICT } });
  });
});
