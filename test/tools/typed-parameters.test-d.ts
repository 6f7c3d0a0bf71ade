import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import * as v from 'valibot';
import { expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineSkill, defineTool, type JsonSchema, type Tool } from '../../src/index.js';
import type { FromJsonSchema } from '../../src/tools/index.js';

test('a JSON Schema literal types execute; an undeclared argument does not compile', () => {
  defineTool({
    name: 'lookup_player',
    description: 'Find a player by id.',
    parameters: { type: 'object', properties: { id: { type: 'string' }, limit: { type: 'integer' } }, required: ['id'] },
    execute: (args) => {
      expectTypeOf(args).toEqualTypeOf<{ id: string; limit?: number }>();
      // @ts-expect-error: nope is not a parameter
      void args.nope;
      return args.id.length;
    },
  });
});

test('a schema written as const elsewhere types execute the same way', () => {
  const parameters = {
    type: 'object',
    properties: {
      mood: { enum: ['calm', 'rowdy'] },
      tags: { type: 'array', items: { type: 'string' } },
      at: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false },
      note: { type: ['string', 'null'] },
      pace: { type: 'number', default: 1 },
      kind: { const: 'ale' },
      owner: { $ref: '#/$defs/person' },
    },
    required: ['mood'],
    additionalProperties: false,
    $defs: { person: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  } as const;
  const tool = defineTool({ name: 'serve', description: 'Serve.', parameters, execute: () => 'ok' });
  expectTypeOf(tool).toEqualTypeOf<
    Tool<{ mood: 'calm' | 'rowdy'; pace: number; tags?: string[]; at?: [number, number]; note?: string | null; kind?: 'ale'; owner?: { name: string } }, string>
  >();
  expectTypeOf<FromJsonSchema<{ type: 'array'; items: [{ type: 'string' }]; additionalItems: { type: 'boolean' } }>>().toEqualTypeOf<[string, ...boolean[]]>();
  expectTypeOf<FromJsonSchema<{ anyOf: [{ type: 'string' }, { type: 'integer' }] }>>().toEqualTypeOf<string | number>();
  expectTypeOf<FromJsonSchema<{ type: 'object'; additionalProperties: { type: 'number' } }>>().toEqualTypeOf<{ [key: string]: number }>();
});

test('a schema the types cannot read gives the plain argument record', () => {
  const parameters: JsonSchema = { type: 'object', properties: { id: { type: 'string' } } };
  defineTool({
    name: 't',
    description: 'd',
    parameters,
    execute: (args) => {
      expectTypeOf(args).toEqualTypeOf<Readonly<Record<string, unknown>>>();
      return args['anything'];
    },
  });
});

test('a zod schema types execute with its output type', () => {
  const parameters = z.object({ id: z.string().max(16), count: z.number().int().default(1), when: z.string().max(40).transform((text) => text.length) });
  defineTool({
    name: 't',
    description: 'd',
    parameters,
    execute: (args) => {
      expectTypeOf(args).toEqualTypeOf<{ id: string; count: number; when: number }>();
      // @ts-expect-error: nope is not a parameter
      void args.nope;
    },
  });
});

test('a valibot schema, wrapped by toStandardJsonSchema, types execute', () => {
  const parameters = toStandardJsonSchema(v.object({ id: v.pipe(v.string(), v.maxLength(16)), tags: v.optional(v.array(v.string())) }));
  defineTool({
    name: 't',
    description: 'd',
    parameters,
    execute: (args) => {
      expectTypeOf(args).toEqualTypeOf<{ id: string; tags?: string[] | undefined }>();
      // @ts-expect-error: nope is not a parameter
      void args.nope;
    },
  });
  // @ts-expect-error: a bare valibot schema cannot give its JSON Schema; wrap it with toStandardJsonSchema
  defineTool({ name: 't', description: 'd', parameters: v.object({ id: v.string() }), execute: () => 1 });
});

test('an arktype type types execute', () => {
  const parameters = type({ id: 'string <= 16', 'mood?': "'calm' | 'rowdy'" });
  defineTool({
    name: 't',
    description: 'd',
    parameters,
    execute: (args) => {
      expectTypeOf(args).toEqualTypeOf<{ id: string; mood?: 'calm' | 'rowdy' }>();
      // @ts-expect-error: nope is not a parameter
      void args.nope;
    },
  });
});

test('hooks and skills are typed by the same parameters', () => {
  const parameters = z.object({ id: z.string().max(16) });
  defineTool({
    name: 't',
    description: 'd',
    parameters,
    needsApproval: (args) => {
      expectTypeOf(args).toEqualTypeOf<{ id: string }>();
      return args.id === 'root';
    },
    execute: () => 1,
  });
  defineSkill({
    name: 's',
    description: 'd',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    tools: [],
    run: (args) => {
      expectTypeOf(args).toEqualTypeOf<{ id: string }>();
      // @ts-expect-error: nope is not a parameter
      return args.nope;
    },
  });
  // Typed tools still fit a list of tools.
  const tools: Tool[] = [defineTool({ name: 't', description: 'd', parameters, execute: ({ id }) => id })];
  void tools;
});
