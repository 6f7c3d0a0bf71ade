import { Ajv } from 'ajv';
import { createAgent, createBus, defineTool, type Provider, type ModelRequest } from '../../src/index.js';
import { measure, type Row } from './measure.js';

/**
 * µs per agent run: two model turns (one call, then the answer), XML protocol, a zero-latency
 * scripted brain, bus and validation on — against a bare hand-written loop doing the same
 * find/parse/validate/execute/observe work with no runtime around it.
 */

const parameters = {
  type: 'object',
  properties: { player_id: { type: 'string', maxLength: 16 } },
  required: ['player_id'],
  additionalProperties: false,
} as const;

const CALL_TURN = 'Looking that up.\n<ACTION><lookup_player><player_id>7</player_id></lookup_player></ACTION>';
const ANSWER_TURN = 'Player 7 is Ana.';
const roster: Record<string, { name: string }> = { '7': { name: 'Ana' } };

/** Answers each request at once: the call first, then the answer once an observation came back. */
function zeroLatencyBrain(): Provider {
  const call = { text: CALL_TURN, finishReason: 'stop' as const, usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 } };
  const answer = { text: ANSWER_TURN, finishReason: 'stop' as const, usage: { inputTokens: 140, outputTokens: 6, totalTokens: 146 } };
  return {
    name: 'bench',
    complete: async (request: ModelRequest) => (request.round === 1 ? call : answer),
  };
}

export async function benchAgentRun(iterations: number): Promise<Row[]> {
  const tool = defineTool({
    name: 'lookup_player',
    description: 'Find a player by id.',
    parameters,
    readOnly: true,
    execute: ({ player_id }) => roster[player_id as string] ?? null,
  });
  const bus = createBus();
  // A subscriber, as a UI panel would have: the bus does its full delivery work.
  let delivered = 0;
  bus.on('*', () => void delivered++);
  const agent = createAgent({ name: 'bench', tools: [tool], provider: zeroLatencyBrain(), bus });

  const troupe = await measure('troupe agent.run (2 turns, 1 call)', iterations, async () => {
    const result = await agent.run('Who is player 7?');
    if (result.reason !== 'final_answer') throw new Error(`bench run ended ${result.reason}: ${result.error}`);
  });

  // The same run with the statechart stepped by XState's own interpreter (`engine: 'xstate'`).
  const interpreted = createAgent({ name: 'bench-xstate', tools: [tool], provider: zeroLatencyBrain(), bus, engine: 'xstate' });
  const xstate = await measure("troupe agent.run, engine: 'xstate'", Math.ceil(iterations / 4), async () => {
    const result = await interpreted.run('Who is player 7?');
    if (result.reason !== 'final_answer') throw new Error(`bench run ended ${result.reason}: ${result.error}`);
  });

  const bare = await measure('bare hand-written loop', iterations, bareLoop());
  if (delivered === 0) throw new Error('bench bus delivered nothing');
  return [{ ...troupe, ratio: troupe.usPerOp / bare.usPerOp }, { ...xstate, ratio: xstate.usPerOp / bare.usPerOp }, bare];
}

/** The same work with nothing around it: find the block, read the argument, validate, execute, observe. */
function bareLoop(): () => Promise<void> {
  const ajv = new Ajv({ strict: true, coerceTypes: false, useDefaults: true, ownProperties: true });
  const validate = ajv.compile(parameters);
  const brain = zeroLatencyBrain();
  const signal = new AbortController().signal;
  return async () => {
    const messages: { role: 'user' | 'assistant'; content: string }[] = [{ role: 'user', content: 'Who is player 7?' }];
    for (let round = 1; ; round++) {
      const response = await brain.complete({ messages, signal, round, agent: 'bare' });
      messages.push({ role: 'assistant', content: response.text });
      const open = response.text.indexOf('<ACTION>');
      if (open < 0) return;
      const close = response.text.indexOf('</ACTION>', open);
      const block = response.text.slice(open + 8, close);
      const name = /^<([A-Za-z][\w-]*)>/.exec(block)![1]!;
      const args: Record<string, unknown> = {};
      for (const match of block.matchAll(/<(\w+)>([^<]*)<\/\1>/g)) args[match[1]!] = match[2]!.trim();
      if (!validate(args)) throw new Error('invalid');
      const output = await Promise.resolve(roster[args.player_id as string] ?? null);
      messages.push({ role: 'user', content: `<OBSERVATION>\n${name} completed:\n${JSON.stringify(output)}\n</OBSERVATION>` });
    }
  };
}
