import { APICallError, type LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAgent, createBus, defineTool } from '../../src/index.js';
import type { Provider, ScriptedReply } from '../../src/index.js';
import { aiSdkProvider } from '../../src/llm/ai-sdk/index.js';
import { recordEvents, scriptedProvider, sequentialIds, steppedClock, testAgent } from '../../src/testing/index.js';
import { callParts, generated, reason, stallingStream, streamed, textParts, v3Usage } from './ai-sdk-helpers.js';
import { normalizeEvents } from './normalize.js';

afterEach(() => {
  vi.useRealTimers();
});

const ACTION_PIECES = ['I will', ' look that up', '.\n', '<ACTION', '>\n<', 'lookup', '_player', '>\n<id', '>7</', 'id>\n</', 'lookup_player', '>\n'];
const ACTION_TEXT = ACTION_PIECES.join('');
const ANSWER = 'Player 7 is Ana, a left-handed striker.';

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

/** The same exchange as the scripted brain's turns. */
const XML_TURNS: ScriptedReply[] = [
  { text: ACTION_TEXT, finishReason: 'stop_sequence', stopSequence: '</ACTION>', usage: { inputTokens: 82, outputTokens: 17, totalTokens: 99 } },
  { text: ANSWER, usage: { inputTokens: 120, outputTokens: 9, totalTokens: 129 } },
];
const NATIVE_TURNS: ScriptedReply[] = [
  { toolCalls: [{ id: 'call_7', name: 'lookup_player', arguments: '{"id":"7"}' }], usage: { inputTokens: 96, outputTokens: 18, totalTokens: 114 } },
  { text: ANSWER, usage: { inputTokens: 120, outputTokens: 9, totalTokens: 129 } },
];

describe('an agent on aiSdkProvider (MockLanguageModelV3)', () => {
  it.each([true, false])('runs the XML protocol end to end with a tool, as the scripted brain does (stream: %s)', async (stream) => {
    // The model honours the stop sequence: its answer ends where `</ACTION>` would have begun.
    const model = new MockLanguageModelV3({
      doStream: [streamed(textParts(ACTION_PIECES, reason('stop'), v3Usage(82, 17))), streamed(textParts([ANSWER], reason('stop'), v3Usage(120, 9)))],
      doGenerate: [generated([{ type: 'text', text: ACTION_TEXT }], reason('stop'), v3Usage(82, 17)), generated([{ type: 'text', text: ANSWER }], reason('stop'), v3Usage(120, 9))],
    });
    const real = await run(aiSdkProvider(model), { protocol: 'xml', stream });
    const scripted = await run(scriptedProvider(XML_TURNS, { stream }), { protocol: 'xml', stream });

    expect(real.result).toMatchObject({ reason: 'final_answer', text: ANSWER, usage: { inputTokens: 202, outputTokens: 26, totalTokens: 228 } });
    expect(real.executed).toEqual(['7']);
    expect(real.events).toEqual(scripted.events);
    const calls = stream ? model.doStreamCalls : model.doGenerateCalls;
    expect(calls).toHaveLength(2);
    expect(calls[0]!.stopSequences).toEqual(['</ACTION>']);
    expect(calls[0]).not.toHaveProperty('tools');
    // The second deliberation hears the observation as a user message.
    expect(calls[1]!.prompt.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'text', text: expect.stringContaining('lookup_player') }] });
  });

  it('stops a model that ignores the stop sequence at </ACTION>, cancelling its stream, and runs the block', async () => {
    const { result: runaway, cancelled } = stallingStream(textParts([...ACTION_PIECES, '</ACTION>', 'And then I made up the answer.']).slice(0, -2));
    const model = new MockLanguageModelV3({ doStream: [runaway, streamed(textParts([ANSWER]))] });
    const executed: string[] = [];
    const { agent } = testAgent({ provider: aiSdkProvider(model), tools: [lookupPlayer(executed)] });
    expect(await agent.run('Who is player 7?')).toMatchObject({ reason: 'final_answer', text: ANSWER });
    expect(executed).toEqual(['7']);
    expect(cancelled()).toBe(true);
  });

  it('runs the native protocol end to end, as the scripted brain does, and sends the call back with its result', async () => {
    const model = new MockLanguageModelV3({
      doStream: [
        streamed([...callParts('call_7', 'lookup_player', ['{"', 'id":"', '7"}']), { type: 'finish', finishReason: reason('tool-calls', 'tool_calls'), usage: v3Usage(96, 18) }]),
        streamed(textParts(['Player 7 is Ana,', ' a left-handed striker.'], reason('stop'), v3Usage(120, 9))),
      ],
    });
    const real = await run(aiSdkProvider(model), { protocol: 'native', stream: true });
    const scripted = await run(scriptedProvider(NATIVE_TURNS, { stream: true }), { protocol: 'native', stream: true });

    expect(real.result).toMatchObject({ reason: 'final_answer', text: ANSWER });
    expect(real.executed).toEqual(['7']);
    expect(real.events).toEqual(scripted.events);
    expect(model.doStreamCalls[0]).toMatchObject({ toolChoice: { type: 'auto' }, tools: [{ type: 'function', name: 'lookup_player' }] });
    expect(model.doStreamCalls[1]!.prompt.slice(-2)).toMatchObject([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_7', toolName: 'lookup_player', input: { id: '7' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_7', toolName: 'lookup_player', output: { type: 'text' } }] },
    ]);
  });

  it('waits out a 429 exactly as long as retry-after says, then goes on', async () => {
    vi.useFakeTimers();
    const limited = new APICallError({
      message: 'Rate limit reached for requests',
      url: 'https://api.example.test/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '7' },
      isRetryable: true,
    });
    let calls = 0;
    const model = new MockLanguageModelV3({
      doGenerate: () => (++calls === 1 ? Promise.reject(limited) : Promise.resolve(generated([{ type: 'text', text: 'Hello.' }]))),
    });
    const { agent, events } = testAgent({ provider: aiSdkProvider(model), stream: false });
    const running = agent.run('hi');
    await vi.advanceTimersByTimeAsync(6_999);
    expect(model.doGenerateCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(running).resolves.toMatchObject({ reason: 'final_answer', text: 'Hello.' });
    expect(events.filter('llm.error').map((event) => event.data)).toEqual([
      { round: 1, kind: 'rate_limit', message: 'mock-provider: HTTP 429: Rate limit reached for requests', retryable: true, attempt: 1, retryAfterMs: 7_000 },
    ]);
  });

  it('retries a stream that failed part-way from scratch, voiding what it showed', async () => {
    const broken: LanguageModelV3StreamPart[] = [...textParts(['Player 7']).slice(0, 4), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }];
    const model = new MockLanguageModelV3({ doStream: [streamed(broken), streamed(textParts([ANSWER]))] });
    const { agent, events } = testAgent({ provider: aiSdkProvider(model), modelRetry: { attempts: 2, backoffMs: 1 } });
    expect(await agent.run('Who is player 7?')).toMatchObject({ reason: 'final_answer', text: ANSWER });
    expect(events.types().filter((type) => type.startsWith('llm.'))).toEqual(['llm.request', 'llm.delta', 'llm.superseded', 'llm.error', 'llm.delta', 'llm.response']);
    expect(events.find('llm.error')!.data).toMatchObject({ kind: 'server', retryable: true, attempt: 1 });
  });

  it('ends the run aborted when it is aborted mid-stream, and cancels the model stream', async () => {
    const { result, cancelled } = stallingStream(textParts(['Player 7']).slice(0, 4));
    const model = new MockLanguageModelV3({ doStream: result });
    const { agent, events } = testAgent({ provider: aiSdkProvider(model) });
    agent.bus.on('llm.delta', () => agent.abort());
    const finished = await agent.run('Who is player 7?');
    expect(finished.reason).toBe('aborted');
    expect(cancelled()).toBe(true);
    expect(model.doStreamCalls[0]!.abortSignal!.aborted).toBe(true);
    expect(events.types()).not.toContain('llm.error');
  });
});
