import { describe, expect, it } from 'vitest';
import { createAgent, createBus, defineTool } from '../../src/index.js';
import { instrumentBus } from '../../src/otel/index.js';
import { recordEvents, scriptedProvider, sequentialIds } from '../../src/testing/index.js';
import { memorySdk } from './helpers.js';

const LONG = 'x'.repeat(300);

function noteTool() {
  return defineTool({
    name: 'note',
    description: 'Write a note.',
    parameters: { type: 'object', properties: { text: { type: 'string', maxLength: 200 } }, required: ['text'] },
    execute: ({ text }) => ({ saved: String(text), echo: LONG }),
  });
}

describe('instrumentBus content capture', () => {
  it('records replies, tool arguments and results, speech and observations only when asked, cut and redacted', async () => {
    const sdk = memorySdk();
    const bus = createBus({ ids: sequentialIds() });
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider, captureContent: true, maxContentChars: 96, redact: ['hunter2'] });
    const provider = scriptedProvider(['Writing it down.\n<ACTION><note><text>the password is hunter2</text></note></ACTION>', `Done. ${LONG}`]);
    await createAgent({ name: 'clerk', tools: [noteTool()], provider, bus }).run('Note the password.');

    const [first, second] = sdk.named('chat script');
    expect(JSON.parse(first!.attributes['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Writing it down.\n<ACTION><note><text>the password is [redacted]</text></note></ACTION>' }], finish_reason: 'stop' },
    ]);
    const [reply] = JSON.parse(second!.attributes['gen_ai.output.messages'] as string) as { parts: { content: string }[] }[];
    expect(reply!.parts[0]!.content).toBe(`Done. ${'x'.repeat(90)}…[truncated at 96 characters]`);

    const tool = sdk.one('execute_tool note');
    expect(JSON.parse(tool.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ text: 'the password is [redacted]' });
    expect(tool.attributes['gen_ai.tool.call.result']).toBe(`${JSON.stringify({ saved: 'the password is [redacted]', echo: LONG }).slice(0, 96)}…[truncated at 96 characters]`);

    const run = sdk.one('invoke_agent clerk');
    expect(JSON.parse(run.attributes['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: `Done. ${'x'.repeat(90)}…[truncated at 96 characters]` }], finish_reason: 'final_answer' },
    ]);
    expect(run.events.map((event) => [event.name, event.attributes])).toEqual([
      ['troupe.agent.said', { 'troupe.content': 'Writing it down.' }],
      ['troupe.agent.observation', { 'troupe.content': expect.stringContaining('note (clerk/1.1.1) completed'), 'troupe.observation.ok': true }],
      ['troupe.agent.said', { 'troupe.content': `Done. ${'x'.repeat(90)}…[truncated at 96 characters]` }],
    ]);
    expect(JSON.stringify(sdk.spans().map((span) => [span.attributes, span.events]))).not.toContain('hunter2');
  });

  it('writes native calls as tool_call parts with their arguments as objects', async () => {
    const sdk = memorySdk();
    const bus = createBus({ ids: sequentialIds() });
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider, captureContent: true });
    const provider = scriptedProvider([
      { toolCalls: [{ id: 'call_1', name: 'note', arguments: '{"text":"hello"}' }, { id: 'call_2', name: 'note', arguments: '{"text": broken' }], finishReason: 'tool_calls' },
      'Noted.',
    ]);
    await createAgent({ name: 'clerk', tools: [noteTool()], provider, bus, protocol: 'native' }).run('Note hello.');

    const [first] = sdk.named('chat script');
    expect(JSON.parse(first!.attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'tool_call', id: 'call_1', name: 'note', arguments: { text: 'hello' } },
          { type: 'tool_call', id: 'call_2', name: 'note', arguments: '{"text": broken' },
        ],
        finish_reason: 'tool_call',
      },
    ]);
    expect(first!.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_calls']);
  });

  it('captures hostile tool output without throwing: cycles, BigInt, lone surrogates', async () => {
    const sdk = memorySdk();
    const bus = createBus({ ids: sequentialIds() });
    const errors = recordEvents(bus, 'bus.error');
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider, captureContent: true, maxContentChars: 64 });
    const cyclic: Record<string, unknown> = { count: 10n };
    cyclic.self = cyclic;
    const hostile = defineTool({
      name: 'hostile',
      description: 'Return something hard to serialize.',
      parameters: { type: 'object', properties: {} },
      execute: () => cyclic,
    });
    const provider = scriptedProvider(['<ACTION><hostile></hostile></ACTION>', `${'y'.repeat(63)}\u{1F600} and more`]);
    await createAgent({ name: 'clerk', tools: [hostile], provider, bus }).run('Go.');

    expect(errors.all).toEqual([]);
    const result = sdk.one('execute_tool hostile').attributes['gen_ai.tool.call.result'] as string;
    expect(result).toMatch(/^\{"count":"10n","self":"\[Circular\]"/);
    // The cut falls inside the emoji's surrogate pair: the half is dropped, never left alone.
    const [, final] = sdk.named('chat script');
    const [reply] = JSON.parse(final!.attributes['gen_ai.output.messages'] as string) as { parts: { content: string }[] }[];
    expect(reply!.parts[0]!.content).toBe(`${'y'.repeat(63)}…[truncated at 64 characters]`);
  });

  it('records no content by default', async () => {
    const sdk = memorySdk();
    const bus = createBus({ ids: sequentialIds() });
    instrumentBus(bus, { tracerProvider: sdk.tracerProvider });
    const provider = scriptedProvider(['<ACTION><note><text>secret plans</text></note></ACTION>', 'Done.']);
    await createAgent({ name: 'clerk', tools: [noteTool()], provider, bus }).run('Note it.');

    expect(sdk.spans()).toHaveLength(4);
    const exported = JSON.stringify(sdk.spans().map((span) => [span.attributes, span.events]));
    expect(exported).not.toContain('secret plans');
    expect(exported).not.toContain('Done.');
    expect(sdk.one('invoke_agent clerk').events).toEqual([]);
  });
});
