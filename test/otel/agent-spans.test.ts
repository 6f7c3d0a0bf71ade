import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AlwaysOffSampler, BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createAgent, createBus, defineSkill, defineTool, type Bus } from '../../src/index.js';
import { instrumentBus } from '../../src/otel/index.js';
import { METRICS } from '../../src/otel/semconv.js';
import { deferred, recordEvents, scriptedProvider, sequentialIds, steppedClock } from '../../src/testing/index.js';
import { memorySdk, msOf } from './helpers.js';

const CALL = 'Looking.\n<ACTION><lookup_player><player_id>7</player_id></lookup_player></ACTION>';

function lookupTool(execute: (args: Record<string, unknown>) => unknown = () => ({ name: 'Ana', team: 'red' })) {
  return defineTool({
    name: 'lookup_player',
    description: 'Find a player by id.',
    parameters: { type: 'object', properties: { player_id: { type: 'string', maxLength: 16 } }, required: ['player_id'] },
    readOnly: true,
    execute: (args) => execute(args),
  });
}

/** A bus with counted ids and a clock that moves 5 ms per event, so every span has its own times. */
function steppedBus(): Bus {
  return createBus({ ids: sequentialIds(), clock: steppedClock(1_750_000_000_000, 5) });
}

describe('instrumentBus on an agent run', () => {
  it('makes invoke_agent, chat and execute_tool spans with GenAI attributes, linked parent to child, at the events’ times', async () => {
    const sdk = memorySdk();
    const bus = steppedBus();
    const events = recordEvents(bus);
    const close = instrumentBus(bus, { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
    const provider = scriptedProvider(
      [
        { text: CALL, usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 } },
        { text: 'Player 7 is Ana.', usage: { inputTokens: 180, outputTokens: 8, totalTokens: 188 } },
      ],
      { model: 'test-model' },
    );
    const agent = createAgent({ name: 'referee', tools: [lookupTool()], provider, bus });
    const result = await agent.run('Who is player 7?');
    close();
    expect(result.reason).toBe('final_answer');

    const run = sdk.one('invoke_agent referee');
    const chats = sdk.named('chat test-model');
    const tool = sdk.one('execute_tool lookup_player');
    expect(sdk.spans()).toHaveLength(4);
    expect(chats).toHaveLength(2);

    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'referee',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'test-model',
      'troupe.run.reason': 'final_answer',
      'troupe.run.rounds': 2,
      'troupe.run.calls': 1,
      'gen_ai.usage.input_tokens': 300,
      'gen_ai.usage.output_tokens': 38,
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    expect(sdk.parentOf(run)).toBeUndefined();

    expect(chats.map((chat) => chat.kind)).toEqual([SpanKind.CLIENT, SpanKind.CLIENT]);
    expect(chats.map((chat) => chat.attributes)).toEqual([
      expect.objectContaining({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted', 'gen_ai.request.model': 'test-model', 'troupe.llm.round': 1, 'gen_ai.response.finish_reasons': ['stop'], 'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 30 }),
      expect.objectContaining({ 'troupe.llm.round': 2, 'gen_ai.usage.input_tokens': 180, 'gen_ai.usage.output_tokens': 8 }),
    ]);

    expect(tool.kind).toBe(SpanKind.INTERNAL);
    expect(tool.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup_player',
      'gen_ai.tool.call.id': 'referee/1.1.1',
      'gen_ai.tool.type': 'function',
      'troupe.tool.attempt': 1,
    });

    for (const child of [...chats, tool]) {
      expect(sdk.parentOf(child)).toBe(run);
      expect(child.spanContext().traceId).toBe(run.spanContext().traceId);
    }

    // Times are the envelopes' `at`: the run from its first event to agent.finished.
    const at = (type: string, index = 0): number => events.all.filter((event) => event.type === type)[index]!.at;
    expect(msOf(run.startTime)).toBe(at('agent.state'));
    expect(msOf(run.endTime)).toBe(at('agent.finished'));
    expect([msOf(chats[0]!.startTime), msOf(chats[0]!.endTime)]).toEqual([at('llm.request'), at('llm.response')]);
    expect([msOf(chats[1]!.startTime), msOf(chats[1]!.endTime)]).toEqual([at('llm.request', 1), at('llm.response', 1)]);
    expect([msOf(tool.startTime), msOf(tool.endTime)]).toEqual([at('tool.started'), at('tool.completed')]);

    // Content is off by default.
    for (const span of sdk.spans()) {
      expect(Object.keys(span.attributes).filter((key) => key.includes('messages') || key.includes('arguments') || key.includes('result'))).toEqual([]);
    }
  });

  it('records gen_ai.client.token.usage and gen_ai.client.operation.duration per model call, with the conventions’ units and buckets', async () => {
    const sdk = memorySdk();
    const bus = steppedBus();
    const events = recordEvents(bus);
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
    const provider = scriptedProvider(
      [
        { text: CALL, usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 } },
        { text: 'Player 7 is Ana.', usage: { inputTokens: 180, outputTokens: 8, totalTokens: 188 } },
      ],
      { model: 'test-model' },
    );
    await createAgent({ name: 'referee', tools: [lookupTool()], provider, bus }).run('Who is player 7?');

    const base = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted', 'gen_ai.request.model': 'test-model' };
    const tokens = await sdk.points('gen_ai.client.token.usage');
    expect(tokens.map(({ attributes, count, sum }) => ({ attributes, count, sum }))).toEqual([
      { attributes: { ...base, 'gen_ai.token.type': 'input' }, count: 2, sum: 300 },
      { attributes: { ...base, 'gen_ai.token.type': 'output' }, count: 2, sum: 38 },
    ]);
    expect(tokens[0]!.boundaries).toEqual(METRICS.tokenUsage.buckets);
    const durations = await sdk.points('gen_ai.client.operation.duration');
    // Each call lasted from its llm.request to its llm.response, on the bus clock.
    const requests = events.filter('llm.request');
    const seconds = events.filter('llm.response').reduce((sum, response, index) => sum + (response.at - requests[index]!.at) / 1_000, 0);
    expect(durations).toEqual([{ attributes: base, count: 2, sum: expect.closeTo(seconds, 9), boundaries: [...METRICS.duration.buckets] }]);
    expect(await sdk.unitOf('gen_ai.client.token.usage')).toBe('{token}');
    expect(await sdk.unitOf('gen_ai.client.operation.duration')).toBe('s');
  });

  it('still records metrics when the sampler drops the trace', async () => {
    const sdk = memorySdk();
    const tracerProvider = new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [new SimpleSpanProcessor(sdk.exporter)] });
    const bus = steppedBus();
    instrumentBus(bus, { tracerProvider, meterProvider: sdk.meterProvider });
    const provider = scriptedProvider([CALL, { text: 'Player 7 is Ana.', usage: { inputTokens: 180, outputTokens: 8, totalTokens: 188 } }]);
    await createAgent({ name: 'referee', tools: [lookupTool()], provider, bus }).run('Who is player 7?');

    expect(sdk.spans()).toEqual([]);
    expect((await sdk.points('gen_ai.client.operation.duration')).map((point) => point.count)).toEqual([2]);
  });

  it('ends a failed tool call’s span with error.type = the failure’s kind; the run goes on', async () => {
    const sdk = memorySdk();
    const bus = steppedBus();
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider });
    const failing = lookupTool(() => {
      throw new Error('the roster is offline');
    });
    const provider = scriptedProvider([CALL, 'I could not look it up.']);
    const result = await createAgent({ name: 'referee', tools: [failing], provider, bus }).run('Who is player 7?');
    expect(result.reason).toBe('final_answer');

    const tool = sdk.one('execute_tool lookup_player');
    expect(tool.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the roster is offline' });
    expect(tool.attributes['error.type']).toBe('execution');
    expect(sdk.one('invoke_agent referee').status.code).toBe(SpanStatusCode.UNSET);
  });

  it('keeps a retried model call as one chat span with its failed attempts as events', async () => {
    const sdk = memorySdk();
    const bus = steppedBus();
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
    const provider = scriptedProvider([{ error: { kind: 'rate_limit', retryable: true, retryAfterMs: 0 } }, 'Player 7 is Ana.']);
    const result = await createAgent({ name: 'referee', provider, bus }).run('Who is player 7?');
    expect(result.reason).toBe('final_answer');

    const chat = sdk.one('chat script');
    expect(chat.status.code).toBe(SpanStatusCode.UNSET);
    expect(chat.attributes['troupe.llm.attempts']).toBe(2);
    expect(chat.events.map((event) => [event.name, event.attributes])).toEqual([
      ['troupe.llm.error', { 'error.type': 'rate_limit', 'troupe.llm.attempt': 1, 'troupe.llm.retryable': true }],
    ]);
    expect((await sdk.points('gen_ai.client.operation.duration')).map((point) => point.attributes['error.type'])).toEqual([undefined]);
  });

  it('fails the chat span and the run span with the model’s error kind when the model call fails for good', async () => {
    const sdk = memorySdk();
    const bus = steppedBus();
    const events = recordEvents(bus);
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
    const provider = scriptedProvider([{ error: { kind: 'auth', message: 'bad key', retryable: false } }]);
    const result = await createAgent({ name: 'referee', provider, bus }).run('Who is player 7?');
    expect(result.reason).toBe('error');

    const chat = sdk.one('chat script');
    expect(chat.status).toEqual({ code: SpanStatusCode.ERROR, message: events.find('llm.error')!.data.message });
    expect(chat.attributes['error.type']).toBe('auth');
    expect(msOf(chat.endTime)).toBe(events.find('llm.error')!.at);
    const run = sdk.one('invoke_agent referee');
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: result.error });
    expect(run.attributes).toMatchObject({ 'error.type': 'auth', 'troupe.run.reason': 'error' });
    const [duration] = await sdk.points('gen_ai.client.operation.duration');
    expect(duration!.attributes['error.type']).toBe('auth');
    expect(await sdk.points('gen_ai.client.token.usage')).toEqual([]);
  });

  it('notes refused calls on the run’s span', async () => {
    const sdk = memorySdk();
    const bus = steppedBus();
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider });
    const provider = scriptedProvider(['<ACTION><lookup_playr><player_id>7</player_id></lookup_playr></ACTION>', 'Never mind.']);
    await createAgent({ name: 'referee', tools: [lookupTool()], provider, bus }).run('Who is player 7?');

    const run = sdk.one('invoke_agent referee');
    expect(run.events.map((event) => [event.name, event.attributes])).toEqual([
      ['troupe.tool.rejected', { 'gen_ai.tool.name': 'lookup_playr', 'gen_ai.tool.call.id': 'referee/1.1.1', 'troupe.rejection.code': 'unknown_tool', 'troupe.rejection.category': 'unknown_tool' }],
    ]);
    expect(sdk.named('execute_tool lookup_playr')).toEqual([]);
  });

  it('puts a skill’s steps under the skill’s tool span, and a child agent’s run under its skill call', async () => {
    const sdk = memorySdk();
    const bus = steppedBus();
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider });
    const lookup = lookupTool();
    const scout = defineSkill({
      name: 'scout',
      description: 'Look a player up.',
      parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      readOnly: true,
      tools: [lookup],
      run: ({ id }, steps) => steps.call('lookup_player', { player_id: id }),
    });
    const research = defineSkill({
      name: 'research',
      description: 'Research a question.',
      parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
      agent: { tools: [lookup], provider: scriptedProvider([CALL, 'Ana plays for red.']) },
    });
    const provider = scriptedProvider(['<ACTION><scout><id>7</id></scout><research><question>team?</question></research></ACTION>', 'Done.']);
    const result = await createAgent({ name: 'referee', tools: [scout, research], provider, bus }).run('Scout player 7.');
    expect(result.reason).toBe('final_answer');

    const run = sdk.one('invoke_agent referee');
    const scoutSpan = sdk.one('execute_tool scout');
    const researchSpan = sdk.one('execute_tool research');
    const child = sdk.one('invoke_agent referee/1.1.2/research');
    const lookups = sdk.named('execute_tool lookup_player');
    expect(sdk.parentOf(scoutSpan)).toBe(run);
    expect(sdk.parentOf(researchSpan)).toBe(run);
    expect(sdk.parentOf(child)).toBe(researchSpan);
    // The step under the skill call; the child agent's own call under the child's run.
    expect(lookups.map((span) => [span.attributes['gen_ai.tool.call.id'], sdk.parentOf(span)?.name])).toEqual([
      ['referee/1.1.1/1', 'execute_tool scout'],
      ['referee/1.1.2/research/1.1.1', 'invoke_agent referee/1.1.2/research'],
    ]);
    expect(sdk.named('chat script').map((span) => sdk.parentOf(span)?.name).sort()).toEqual([
      'invoke_agent referee',
      'invoke_agent referee',
      'invoke_agent referee/1.1.2/research',
      'invoke_agent referee/1.1.2/research',
    ]);
    expect(new Set(sdk.spans().map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it('never stops a run when the tracer throws: the bus reports it as bus.error', async () => {
    const bus = steppedBus();
    const errors = recordEvents(bus, 'bus.error');
    const broken = { getTracer: () => ({ startSpan: () => { throw new Error('exporter misconfigured'); }, startActiveSpan: () => undefined }) };
    instrumentBus(bus, { tracerProvider: broken as never });
    const result = await createAgent({ name: 'referee', tools: [lookupTool()], provider: scriptedProvider([CALL, 'Player 7 is Ana.']), bus }).run('Who is player 7?');

    expect(result.reason).toBe('final_answer');
    expect(errors.all.length).toBeGreaterThan(0);
    expect(new Set(errors.filter('bus.error').map((event) => event.data.message))).toEqual(new Set(['Error: exporter misconfigured']));
  });

  it('ends the spans still open as interrupted when closed, and makes no more', async () => {
    const sdk = memorySdk();
    const bus = steppedBus();
    const events = recordEvents(bus);
    const close = instrumentBus(bus, { tracerProvider: sdk.tracerProvider });
    const gate = deferred<unknown>();
    const started = deferred<void>();
    bus.once('tool.started', () => started.resolve());
    const agent = createAgent({ name: 'referee', tools: [lookupTool(() => gate.promise)], provider: scriptedProvider([CALL, 'Player 7 is Ana.']), bus });
    const running = agent.run('Who is player 7?');
    await started.promise;
    close();
    close();

    const last = events.all.at(-1)!.at;
    const tool = sdk.one('execute_tool lookup_player');
    const run = sdk.one('invoke_agent referee');
    for (const span of [tool, run]) {
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'interrupted: instrumentBus was closed' });
      expect(span.attributes['error.type']).toBe('interrupted');
      expect(msOf(span.endTime)).toBe(last);
    }
    gate.resolve({ name: 'Ana' });
    expect((await running).reason).toBe('final_answer');
    expect(sdk.spans()).toHaveLength(3);
  });
});
