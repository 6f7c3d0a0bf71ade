import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Provider } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import type { ScriptedReply } from '../../src/testing/index.js';
import { rosterTools } from '../agent/fixtures.js';
import { adapter, bodyOf } from './anthropic-helpers.js';
import { normalizeEvents } from './normalize.js';
import * as wire from './transcripts/anthropic.js';
import { startWireServer, type WireServer, type WireReply } from './wire-server.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  expect(server.unexpected).toEqual([]);
  await server.close();
});

/** Runs one question through an agent on `provider` and returns its normalized events and result. */
async function runWith(provider: Provider, protocol: 'xml' | 'native', stream: boolean) {
  const { tools, executed } = rosterTools();
  const { agent, events } = testAgent({ provider, tools, protocol, stream, instructions: 'You are the referee.' });
  const result = await agent.run('Who are 7 and 9?');
  return { result, executed, events: normalizeEvents(events.all) };
}

const finalTurn: ScriptedReply = { text: 'Ana plays for the red team.', usage: { inputTokens: 540, outputTokens: 9, totalTokens: 549 } };

const cases: { name: string; protocol: 'xml' | 'native'; stream: boolean; replies: WireReply[]; script: ScriptedReply[] }[] = [
  {
    name: 'xml, streamed, stopped at </ACTION>',
    protocol: 'xml',
    stream: true,
    replies: [wire.sse(wire.actionStream), wire.sse(wire.textStream)],
    script: [
      { text: wire.ACTION_TEXT, finishReason: 'stop_sequence', stopSequence: '</ACTION>', usage: { inputTokens: 903, outputTokens: 24, totalTokens: 927 } },
      finalTurn,
    ],
  },
  {
    name: 'native, streamed, parallel calls',
    protocol: 'native',
    stream: true,
    replies: [wire.sse(wire.parallelStream), wire.sse(wire.textStream)],
    script: [
      {
        text: 'Checking both.',
        toolCalls: [
          { id: 'toolu_01A09q90qw90lq917835lq9', name: 'lookup_player', arguments: '{"player_id": "7"}' },
          { id: 'toolu_01B19r81rx81mr828946mr8', name: 'lookup_player', arguments: '{"player_id": "9"}' },
        ],
        usage: { inputTokens: 510, outputTokens: 88, totalTokens: 598 },
      },
      finalTurn,
    ],
  },
  {
    name: 'native, whole responses',
    protocol: 'native',
    stream: false,
    replies: [wire.json(wire.parallelMessage), wire.json(wire.textMessage)],
    script: [
      {
        text: 'Checking both.',
        toolCalls: [
          { id: 'toolu_01A09q90qw90lq917835lq9', name: 'lookup_player', arguments: '{"player_id":"7"}' },
          { id: 'toolu_01B19r81rx81mr828946mr8', name: 'lookup_player', arguments: '{"player_id":"9"}' },
        ],
        usage: { inputTokens: 510, outputTokens: 88, totalTokens: 598 },
      },
      { text: 'Ana plays for the red team.', usage: { inputTokens: 604, outputTokens: 9, totalTokens: 613 } },
    ],
  },
];

describe('anthropicProvider in an agent', () => {
  it.each(cases)('publishes the same normalized events as the scripted provider ($name)', async ({ protocol, stream, replies, script }) => {
    server.reply(...replies);
    const real = await runWith(adapter(server), protocol, stream);
    const scripted = scriptedProvider(script, { stream });
    const expected = await runWith(scripted, protocol, stream);
    scripted.assertConsumed();

    expect(real.result.reason).toBe('final_answer');
    expect(real.result.text).toBe('Ana plays for the red team.');
    expect(real.executed).toEqual(expected.executed);
    expect(real.events).toEqual(expected.events);
    if (stream) expect(real.events.map((event) => event.type)).toContain('llm.delta');
  });

  it('sends the round-one calls and their results back in round two (native)', async () => {
    server.reply(wire.sse(wire.parallelStream), wire.sse(wire.textStream));
    await runWith(adapter(server), 'native', true);
    const body = bodyOf(server, 1);
    expect(body['system']).toContain('You are the referee.');
    expect(body['tools']).toEqual([
      expect.objectContaining({ name: 'lookup_player', input_schema: expect.objectContaining({ type: 'object' }) }),
      expect.objectContaining({ name: 'set_team' }),
    ]);
    const messages = body['messages'] as { role: string; content: unknown }[];
    expect(messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'lookup_player', input: { player_id: '7' } },
          { type: 'tool_use', id: 'toolu_01B19r81rx81mr828946mr8', name: 'lookup_player', input: { player_id: '9' } },
        ],
      },
      {
        role: 'user',
        content: [
          expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: expect.stringContaining('Ana') }),
          expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_01B19r81rx81mr828946mr8', content: expect.stringContaining('Bo') }),
        ],
      },
    ]);
  });

  it('marks a rejected native call is_error, worded for function calls, and a completed one not', async () => {
    server.reply(wire.sse(wire.brokenArgumentsStream), wire.sse(wire.textStream));
    const { result } = await runWith(adapter(server), 'native', true);
    expect(result.reason).toBe('final_answer');
    const messages = bodyOf(server, 1)['messages'] as { role: string; content: { type: string; is_error?: boolean; content?: string }[] }[];
    const results = messages.at(-1)!.content.filter((block) => block.type === 'tool_result');
    expect(results).toEqual([expect.objectContaining({ type: 'tool_result', is_error: true, content: expect.stringMatching(/^This round's tool calls were rejected; nothing ran/) })]);
    expect(results[0]!.content).toContain("Fix the call and make this round's calls again.");
    expect(results[0]!.content).not.toContain('<ACTION>');
  });

  it('sends a completed native call without is_error', async () => {
    server.reply(wire.sse(wire.parallelStream), wire.sse(wire.textStream));
    await runWith(adapter(server), 'native', true);
    const messages = bodyOf(server, 1)['messages'] as { role: string; content: { type: string; is_error?: boolean }[] }[];
    expect(messages.at(-1)!.content.map((block) => block.is_error)).toEqual([undefined, undefined]);
  });

  it('asks the XML agent to stop at </ACTION> and sends the block back closed', async () => {
    server.reply(wire.sse(wire.actionStream), wire.sse(wire.textStream));
    await runWith(adapter(server), 'xml', true);
    expect(bodyOf(server, 0)['stop_sequences']).toEqual(['</ACTION>']);
    const messages = bodyOf(server, 1)['messages'] as { role: string; content: unknown }[];
    expect(messages[1]).toEqual({ role: 'assistant', content: `${wire.ACTION_TEXT}</ACTION>` });
  });
});
