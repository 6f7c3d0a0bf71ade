import { expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { createAgent, scriptedProvider, type Agent, type RunResult } from '../../src/index.js';

const provider = scriptedProvider([]);

test('a JSON Schema literal types result.output', async () => {
  const agent = createAgent({
    name: 'judge',
    provider,
    output: { type: 'object', properties: { winner: { type: 'string', enum: ['red', 'blue'] }, score: { type: 'integer' } }, required: ['winner'] },
  });
  const result = await agent.run('Who won?');
  expectTypeOf(result.output).toEqualTypeOf<{ winner: 'red' | 'blue'; score?: number } | undefined>();
});

test("a Standard Schema types result.output with the schema's output", async () => {
  const agent = createAgent({ name: 'judge', provider, output: z.object({ winner: z.string(), at: z.string().transform((text) => text.length) }) });
  expectTypeOf((await agent.run('Who won?')).output).toEqualTypeOf<{ winner: string; at: number } | undefined>();
  const resumed = await agent.resume({} as never);
  expectTypeOf(resumed).toEqualTypeOf<RunResult<{ winner: string; at: number }> | undefined>();
});

test('without output, result.output is unknown, and a typed agent is still an Agent', async () => {
  const plain = createAgent({ name: 'plain', provider });
  expectTypeOf((await plain.run('Hi')).output).toEqualTypeOf<unknown>();
  const typed = createAgent({ name: 'judge', provider, output: z.object({ winner: z.string() }) });
  expectTypeOf(typed).toMatchTypeOf<Agent>();
  // @ts-expect-error: output must be a schema
  createAgent({ name: 'bad', provider, output: 'json' });
});
