import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAgent, createBus, defineTool } from '../../src/index.js';
import { sequentialIds, steppedClock, recordEvents, scriptedProvider } from '../../src/testing/index.js';
import { openaiProvider } from '../../src/llm/openai/index.js';
import type { Provider, ScriptedReply } from '../../src/index.js';
import { normalizeEvents } from './normalize.js';
import { startWireServer, type WireReply, type WireServer } from './wire-server.js';
import { ACTION_PIECES, ACTION_TEXT, CALL_A, PLAIN_PIECES, PLAIN_TEXT, SINGLE_CALL_STREAM, completion, call, textStream, usage } from './transcripts/openai.js';

let server: WireServer;

beforeEach(async () => {
  server = await startWireServer();
  vi.stubEnv('OPENAI_API_KEY', '');
  vi.stubEnv('OPENAI_BASE_URL', '');
});

afterEach(async () => {
  vi.unstubAllEnvs();
  expect(server.unexpected).toEqual([]);
  await server.close();
});

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

/** One run of the same agent on a provider: its normalized bus events and the tools it ran. */
async function run(provider: Provider, options: { protocol: 'xml' | 'native'; stream: boolean }) {
  const executed: string[] = [];
  const bus = createBus({ ids: sequentialIds(), clock: steppedClock(1_000, 1) });
  const events = recordEvents(bus);
  const agent = createAgent({ name: 'referee', instructions: 'You are the referee.', tools: [lookupPlayer(executed)], provider, bus, ...options });
  const result = await agent.run('Who is player 7?');
  return { result, executed, events: normalizeEvents(events.all) };
}

const adapter = () => openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test-agent-1a2b3c4d', baseURL: `${server.url}/v1`, timeoutMs: 5_000 });

const ROUND_1 = usage(82, 17);
const ROUND_2 = usage(120, 9);
const asUsage = (wire: typeof ROUND_1) => ({ inputTokens: wire.prompt_tokens, outputTokens: wire.completion_tokens, totalTokens: wire.total_tokens });

/** The same exchange as the scripted brain's turns. */
const XML_TURNS: ScriptedReply[] = [
  { text: ACTION_TEXT, finishReason: 'stop_sequence', stopSequence: '</ACTION>', usage: asUsage(ROUND_1) },
  { text: PLAIN_TEXT, usage: asUsage(ROUND_2) },
];
const NATIVE_TURNS: ScriptedReply[] = [
  { toolCalls: [{ id: CALL_A, name: 'lookup_player', arguments: '{"id":"7"}' }], usage: { inputTokens: 96, outputTokens: 18, totalTokens: 114 } },
  { text: PLAIN_TEXT, usage: asUsage(ROUND_2) },
];

describe('an agent on openaiProvider', () => {
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
    const types = real.events.map((event) => event.type);
    expect(types).toContain('tool.completed');
    expect(types.includes('llm.delta')).toBe(stream);
    // The XML protocol asks the server to stop at the closer, and offers no native tools.
    expect(server.requests[0]!.body).toMatchObject({ stop: ['</ACTION>'], stream });
    expect(server.requests[0]!.body).not.toHaveProperty('tools');
  });

  it('publishes the same native-protocol events as the scripted brain, and sends the call back with its result', async () => {
    server.reply({ kind: 'sse', events: SINGLE_CALL_STREAM }, { kind: 'sse', events: textStream(PLAIN_PIECES, 'stop', ROUND_2) });
    const real = await run(adapter(), { protocol: 'native', stream: true });
    const scripted = await run(scriptedProvider(NATIVE_TURNS, { stream: true }), { protocol: 'native', stream: true });

    expect(real.result).toMatchObject({ reason: 'final_answer', text: PLAIN_TEXT });
    expect(real.executed).toEqual(['7']);
    expect(real.events).toEqual(scripted.events);
    expect(real.events.filter((event) => event.type === 'llm.tool_call.delta')).toEqual([
      { type: 'llm.tool_call.delta', agent: 'referee', data: { round: 1, attempt: 1, index: 0, id: CALL_A, name: 'lookup_player', arguments: '{"id":"7"}' } },
    ]);
    const first = server.requests[0]!.body as Record<string, unknown>;
    expect(first).toMatchObject({ tool_choice: 'auto', tools: [{ type: 'function', function: { name: 'lookup_player' } }] });
    const messages = (server.requests[1]!.body as { messages: Record<string, unknown>[] }).messages;
    expect(messages.at(-2)).toEqual({ role: 'assistant', content: null, tool_calls: [call(CALL_A, 'lookup_player', '{"id":"7"}')] });
    expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: CALL_A });
  });
});
