/** The prompt manifest and its few-shot example: each tool's example call parses and validates. */
import { describe, expect, it } from 'vitest';
import { exampleCall, renderManifest } from '../../src/protocol/manifest.js';
import { parseOutput } from '../../src/protocol/parse-output.js';
import { renderAction } from '../../src/protocol/render-call.js';
import { DEFAULT_LIMITS } from '../../src/protocol/types.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { createRegistry } from '../../src/tools/registry.js';
import type { JsonSchema, Tool } from '../../src/tools/types.js';
import { validateCalls } from '../../src/tools/validate-calls.js';
import { fixtureTools, listTeams, lookupPlayer, planMatch, writeFile } from '../tools/fixtures.js';

const tool = (name: string, parameters: JsonSchema): Tool => defineTool({ name, description: `The ${name} tool.`, parameters, execute: async () => null });

/** Tools with awkward schemas: every one must still get a valid example, or none at all. */
const awkwardTools = [
  tool('no_params', { type: 'object', properties: {} }),
  tool('optional_only', { type: 'object', properties: { verbose: { type: 'boolean' } } }),
  tool('bounded', {
    type: 'object',
    properties: {
      count: { type: 'integer', minimum: 10, maximum: 20, multipleOf: 5 },
      ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      code: { type: 'string', minLength: 12, maxLength: 12 },
      sku: { type: 'string', pattern: '^[A-Z]{3}$', maxLength: 3 },
      day: { type: 'string', format: 'date', maxLength: 10 },
      tags: { type: 'array', items: { type: 'string' }, minItems: 2, uniqueItems: true },
    },
    required: ['count', 'ratio', 'code', 'sku', 'day', 'tags'],
  }),
  tool('unions', {
    type: 'object',
    properties: {
      maybe: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      either: { type: ['null', 'string'] },
      mode: { enum: ['fast', 'slow'] },
      fixed: { const: 'v1' },
      anything: {},
      point: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], minItems: 2, maxItems: 2 },
    },
    required: ['maybe', 'either', 'mode', 'fixed', 'anything', 'point'],
  }),
  tool('odd_enum', { type: 'object', properties: { n: { type: 'integer', enum: ['1', 2] } }, required: ['n'] }),
  tool('nested', {
    type: 'object',
    $defs: { person: { type: 'object', properties: { name: { type: 'string' }, friends: { type: 'array', items: { $ref: '#/$defs/person' } } }, required: ['name'] } },
    properties: { people: { type: 'array', items: { $ref: '#/$defs/person' } }, boss: { $ref: '#/$defs/person' } },
    required: ['people', 'boss'],
  }),
];

const impossible = tool('impossible', { type: 'object', properties: { key: { type: 'string', pattern: '^zz[0-9]{7}qq$', maxLength: 20 } }, required: ['key'] });

function roundTrip(tools: readonly Tool[], target: Tool) {
  const call = exampleCall(target);
  if (call === undefined) return undefined;
  const text = `I will check.\n${renderAction([{ ...call, ...(target.verbatimParams !== undefined && { verbatimParams: target.verbatimParams }) }])}`;
  const parsed = parseOutput(text);
  expect(parsed.problem).toBeUndefined();
  return validateCalls(parsed.calls, { registry: createRegistry(tools), limits: DEFAULT_LIMITS });
}

describe('exampleCall', () => {
  it.each([...fixtureTools, ...awkwardTools].map((each) => [each.name, each] as const))('the example for %s parses and validates', (_name, target) => {
    const outcome = roundTrip([...fixtureTools, ...awkwardTools], target);
    expect(outcome?.ok).toBe(true);
  });

  it('uses required parameters, enums, defaults and bounds', () => {
    expect(exampleCall(lookupPlayer)).toEqual({ name: 'lookup_player', args: { player_id: 3 } });
    expect(exampleCall(listTeams)).toEqual({ name: 'list_teams', args: { league: 'north' } });
    expect(exampleCall(awkwardTools[2] as Tool)?.args).toEqual({ count: 10, ratio: 0.5, code: 'Hello, world', sku: 'ABC', day: '2025-06-01', tags: ['example', 'example2'] });
  });

  it('skips enum values outside the declared type', () => {
    expect(exampleCall(awkwardTools.find((each) => each.name === 'odd_enum') as Tool)?.args).toEqual({ n: 2 });
  });

  it('gives up on a pattern it cannot satisfy', () => {
    expect(exampleCall(impossible)).toBeUndefined();
  });
});

describe('renderManifest', () => {
  it('lists each tool with parameters, types, required marks, enums, defaults and descriptions', () => {
    const text = renderManifest([lookupPlayer, listTeams, planMatch]);
    expect(text).toContain('## lookup_player\nFind a player by id.\nParameters:\n- player_id (integer, required, minimum 1): The player number.\n- verbose (boolean, default false)');
    expect(text).toContain('- league (one of "north", "south")');
    expect(text).toContain('- lineup (array of object, at most 11 items)\n  - each item:\n    - name (string, required)\n    - number (integer, required)');
    expect(text).toContain('- venue (object)\n  - city (string, required)\n  - capacity (integer or null)');
    expect(text).toContain('- kickoff (integer | string)');
    expect(text).toContain('- note (string or null)');
    expect(text).toContain('- extra (any)');
  });

  it('explains the <ACTION> format and shows one example from a real tool', () => {
    const text = renderManifest([listTeams, lookupPlayer]);
    expect(text).toContain('# How to call tools');
    expect(text).toContain('repeat the argument tag once per item');
    expect(text).toContain('<![CDATA[');
    expect(text).toContain('reply without an <ACTION> block');
    expect(text).toContain('Example:\n\nI will check that.\n<ACTION>\n<list_teams>\n<league>north</league>\n</list_teams>\n</ACTION>');
    expect(text.match(/<ACTION>\n</g)).toHaveLength(1);
  });

  it('falls back to another tool, then to a generic example', () => {
    expect(renderManifest([impossible, lookupPlayer])).toContain('<lookup_player>\n<player_id>3</player_id>\n</lookup_player>');
    expect(renderManifest([impossible])).toContain('<tool_name>\n<argument_name>value</argument_name>\n</tool_name>');
  });

  it('leaves the XML rules out for native function calling', () => {
    const text = renderManifest([lookupPlayer, writeFile], { protocol: 'native', instructions: 'You are the referee.' });
    expect(text.startsWith('You are the referee.\n\n# Tools')).toBe(true);
    expect(text).toContain('## write_file');
    expect(text).not.toContain('<ACTION>');
    expect(text).not.toContain('CDATA');
  });

  it('is deterministic', () => {
    expect(renderManifest(fixtureTools)).toBe(renderManifest(fixtureTools));
  });
});
