import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolSchemaError, defineTool, scriptedProvider, type ModelRequest, type Provider, type Tool } from '../../src/index.js';
import { renderManifest } from '../../src/protocol/index.js';
import { chatRequest } from '../../src/llm/openai/chat-request.js';
import { createRegistry } from '../../src/tools/index.js';
import { testAgent } from '../../src/testing/index.js';

/** The same tool three times: a player lookup with an id (≤ 16 characters) and an optional mood. */
function lookupTools(seen: unknown[]): Array<[string, Tool]> {
  const execute = (args: unknown) => {
    seen.push(args);
    return 'found';
  };
  const common = { description: 'Find a player.', execute };
  return [
    ['zod', defineTool({ name: 'lookup', ...common, parameters: z.object({ id: z.string().max(16), mood: z.enum(['calm', 'rowdy']).optional() }) })],
    ['valibot', defineTool({ name: 'lookup', ...common, parameters: toStandardJsonSchema(v.object({ id: v.pipe(v.string(), v.maxLength(16)), mood: v.optional(v.picklist(['calm', 'rowdy'])) })) })],
    ['arktype', defineTool({ name: 'lookup', ...common, parameters: type({ id: 'string <= 16', 'mood?': "'calm' | 'rowdy'" }) })],
  ];
}

const EXPECTED_PARAMETERS = {
  type: 'object',
  properties: { id: { type: 'string', maxLength: 16 }, mood: { enum: ['calm', 'rowdy'] } },
  required: ['id'],
};

describe.each(lookupTools([]).map(([library]) => library))('parameters from %s', (library) => {
  const pick = (seen: unknown[]) => lookupTools(seen).find(([name]) => name === library)![1];

  it('becomes a draft-07 JSON Schema, as the manifest and the native tool specs show it', async () => {
    const tool = pick([]);
    expect(tool.parameters).toMatchObject({ ...EXPECTED_PARAMETERS, properties: { id: EXPECTED_PARAMETERS.properties.id } });
    expect((tool.parameters['properties'] as Record<string, { enum?: unknown }>)['mood']?.enum).toEqual(['calm', 'rowdy']);
    expect(tool.parameters).not.toHaveProperty('$schema');
    const manifest = renderManifest([tool]);
    expect(manifest).toContain('- id (string, required, at most 16 characters)');
    expect(manifest).toContain('- mood (one of "calm", "rowdy")');

    const requests: ModelRequest[] = [];
    const provider: Provider = {
      name: 'capture',
      complete: async (request) => {
        requests.push(request);
        return { text: 'Done.', finishReason: 'stop' };
      },
    };
    const { agent } = testAgent({ provider, tools: [tool], protocol: 'native' });
    await agent.run('Who is 7?');
    expect(requests[0]!.tools).toEqual([{ name: 'lookup', description: 'Find a player.', parameters: tool.parameters }]);
    // …and an adapter sends that JSON Schema as the function's parameters.
    const openai = chatRequest(requests[0]!, { model: 'gpt-4o-mini', reasoningModel: false });
    expect(openai.tools?.[0]).toMatchObject({ type: 'function', function: { name: 'lookup', parameters: tool.parameters } });
  });

  it('rejects model output of the wrong type with a worded issue, then runs the corrected call', async () => {
    const seen: unknown[] = [];
    const provider = scriptedProvider([
      '<ACTION><lookup><id>7</id><mood>sad</mood></lookup></ACTION>',
      '<ACTION><lookup><id>a-very-long-player-id</id></lookup></ACTION>',
      '<ACTION><lookup><id>7</id><mood>calm</mood></lookup></ACTION>',
      'Player 7 is calm.',
    ]);
    const { agent, events } = testAgent({ provider, tools: [pick(seen)] });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('final_answer');
    const rejections = events.filter('tool.rejected').map((event) => event.data.issues[0]);
    expect(rejections).toMatchObject([
      { category: 'validation_error', keyword: 'enum', property: 'mood', message: 'Parameter "mood" is the string "sad", which is not allowed. Use one of: "calm", "rowdy".' },
      { category: 'validation_error', keyword: 'maxLength', property: 'id' },
    ]);
    expect(seen).toEqual([{ id: '7', mood: 'calm' }]);
    provider.assertConsumed();
  });
});

describe('a Standard Schema’s own validate, after AJV', () => {
  it('holds refinements JSON Schema cannot say, and execute gets the schema’s output', async () => {
    const seen: unknown[] = [];
    const pour = defineTool({
      name: 'pour',
      description: 'Pour ales.',
      parameters: z.object({
        count: z.number().int().min(1).refine((count) => count % 2 === 0, 'pour ales in pairs'),
        note: z.string().max(40).default('').transform((note) => note.toUpperCase()),
      }),
      execute: (args) => {
        seen.push(args);
        return args.count;
      },
    });
    const provider = scriptedProvider(['<ACTION><pour><count>3</count></pour></ACTION>', '<ACTION><pour><count>2</count><note>cold</note></pour></ACTION>', 'Poured.']);
    const { agent, events } = testAgent({ provider, tools: [pour] });
    await agent.run('Two ales.');
    expect(events.find('tool.rejected')?.data).toMatchObject({
      code: 'invalid_arguments',
      message: 'Invalid arguments for "pour": Parameter "count": pour ales in pairs',
      issues: [{ category: 'validation_error', keyword: 'schema', path: '/count', property: 'count' }],
    });
    expect(seen).toEqual([{ count: 2, note: 'COLD' }]);
    expect(events.find('action.parsed')?.data.calls[0]?.args).toEqual({ count: 2, note: 'COLD' });
  });

  it('is kept by a copy of the tool ({ ...tool }), which the registry defines again', () => {
    const even = defineTool({ name: 'even', description: 'd', parameters: type({ n: 'number.integer % 2' }), execute: () => 1 });
    const registry = createRegistry([{ ...even }]);
    const copy = registry.get('even')!;
    expect(copy).not.toBe(even);
    expect(registry.validatorOf(copy).standard).toBeDefined();
  });

  it('ends the run with an error naming the tool when it answers asynchronously', async () => {
    const slow = defineTool({
      name: 'slow_check',
      description: 'd',
      parameters: z.object({ id: z.string().max(8).refine(async (id) => id !== 'x') }),
      execute: () => 1,
    });
    const provider = scriptedProvider(['<ACTION><slow_check><id>7</id></slow_check></ACTION>']);
    const { agent } = testAgent({ provider, tools: [slow] });
    const result = await agent.run('Go.');
    expect(result.reason).toBe('error');
    expect(result.error).toContain('tool "slow_check": parameters: the zod schema validated asynchronously');
  });
});

describe('Standard Schemas that cannot give a JSON Schema', () => {
  it('names the library and the way out: a bare valibot schema', () => {
    const attempt = () => defineTool({ name: 'bare', description: 'd', parameters: v.object({ id: v.string() }) as never, execute: () => 1 });
    expect(attempt).toThrow(ToolSchemaError);
    expect(attempt).toThrow('parameters are a valibot Standard Schema that cannot give a JSON Schema');
    expect(attempt).toThrow('toStandardJsonSchema(schema), from @valibot/to-json-schema');
  });

  it('names an unknown library too', () => {
    const parameters = { '~standard': { version: 1, vendor: 'acme', validate: (value: unknown) => ({ value }) } };
    expect(() => defineTool({ name: 'acme', description: 'd', parameters: parameters as never, execute: () => 1 })).toThrow(
      'parameters are a acme Standard Schema that cannot give a JSON Schema (it has no ~standard.jsonSchema), which troupe needs to validate arguments and show them to the model; pass its JSON Schema as parameters instead',
    );
  });

  it('says what the library could not convert', () => {
    expect(() => defineTool({ name: 'dated', description: 'd', parameters: z.object({ at: z.date() }), execute: () => 1 })).toThrow(
      'the zod schema could not be written as JSON Schema (Date cannot be represented in JSON Schema)',
    );
  });

  it('keeps the secure meta-schema: an unbounded pattern is refused whatever library wrote it', () => {
    expect(() => defineTool({ name: 'mail', description: 'd', parameters: z.object({ to: z.email() }), execute: () => 1 })).toThrow(
      'parameters at /properties/to: fails the secure meta-schema: "pattern" and "format" need a "maxLength"',
    );
    expect(() => defineTool({ name: 'mail', description: 'd', parameters: z.object({ to: z.email().max(80) }), execute: () => 1 })).not.toThrow();
  });
});
