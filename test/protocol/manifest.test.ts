/** The prompt manifest and its few-shot example: each tool's example call parses and validates. */
import { describe, expect, it } from 'vitest';
import { createAgent, defineSkill, scriptedProvider } from '../../src/index.js';
import { exampleCall, renderManifest } from '../../src/protocol/manifest.js';
import { toolExamples } from '../../src/protocol/manifest-examples.js';
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

  it('explains the <ACTION> format and shows a call of a real tool, then an answer without a tool', () => {
    const text = renderManifest([listTeams, lookupPlayer]);
    expect(text).toContain('# How to call tools');
    expect(text).toContain('repeat the argument tag once per item');
    expect(text).toContain('<![CDATA[');
    expect(text).toContain('reply without an <ACTION> block');
    expect(text).toContain('# Examples\n\nA call:\nI will check that.\n<ACTION>\n<list_teams>\n<league>north</league>\n</list_teams>\n</ACTION>');
    // Neither tool takes a list or free text: those examples are left out.
    expect(text).not.toContain('A list argument:');
    expect(text).not.toContain('Text in CDATA:');
    expect(text.endsWith('\n\nNo tool needed:\nThe answer is yes.')).toBe(true);
    expect(text.match(/<ACTION>\n</g)).toHaveLength(1);
  });

  it('shows a list argument and text in CDATA from the tools that take them', () => {
    const tagged = tool('tag_post', { type: 'object', properties: { post: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['post'] });
    const text = renderManifest([lookupPlayer, tagged, writeFile]);
    expect(text).toContain('A list argument:\nBoth of them.\n<ACTION>\n<tag_post>\n<post>3</post>\n<tags>example</tags>\n<tags>another</tags>\n</tag_post>\n</ACTION>');
    // write_file's content is verbatim: its CDATA stands on lines of its own.
    expect(text).toContain('Text in CDATA:\nHere it is.\n<ACTION>\n<write_file>\n<path>notes/today.txt</path>\n<content>\n<![CDATA[Ana & Ben are here.\nTell them 3 < 5.]]>\n</content>');
    const patch = tool('apply_patch', { type: 'object', properties: { diff: { type: 'string' } }, required: ['diff'] });
    expect(renderManifest([patch])).toContain('<diff><![CDATA[if (a < b && b < c) {\n  return b;\n}]]></diff>');
    expect(text.match(/<ACTION>\n</g)).toHaveLength(3);
  });

  it('every example it builds parses and validates, for every test tool', () => {
    const tools = [...fixtureTools, ...awkwardTools, impossible];
    const registry = createRegistry(tools);
    for (const target of tools) {
      for (const { text } of toolExamples([target])) {
        // The generic placeholder of a tool without a valid example is not a real call.
        if (text.includes('<tool_name>')) continue;
        const parsed = parseOutput(text);
        expect(parsed.problem, text).toBeUndefined();
        expect(validateCalls(parsed.calls, { registry, limits: DEFAULT_LIMITS }).ok, text).toBe(true);
      }
    }
  });

  it('lists skills apart from plain tools', () => {
    const scout = defineSkill({
      name: 'scout_player',
      description: 'Look a player up, then list the teams.',
      parameters: { type: 'object', properties: { player_id: { type: 'integer' } }, required: ['player_id'] },
      tools: [lookupPlayer, listTeams],
      run: async ({ player_id }, steps) => steps.call('lookup_player', { player_id }),
    });
    const text = renderManifest([scout, lookupPlayer]);
    const tools = text.indexOf('# Tools');
    const skills = text.indexOf('# Skills');
    expect(tools).toBeGreaterThanOrEqual(0);
    expect(skills).toBeGreaterThan(tools);
    expect(text.slice(tools, skills)).toContain('## lookup_player');
    expect(text.slice(tools, skills)).not.toContain('## scout_player');
    expect(text.slice(skills)).toContain('Skills do several steps for you in one call. Call them like tools.\n\n## scout_player\nLook a player up');
    // Only skills: no empty tool list.
    expect(renderManifest([scout])).not.toContain('# Tools');
  });

  it('shows the user’s own examples instead, each checked as a reply', () => {
    const examples = ['Player 3? Let me look.\n<ACTION><lookup_player><player_id>3</player_id></lookup_player></ACTION>', { say: 'Both leagues.', calls: [{ name: 'list_teams', args: { league: 'south' } }] }, { say: 'No need to look: 11 players.' }];
    const text = renderManifest([lookupPlayer, listTeams], { examples });
    expect(text).toContain('# Examples\n\nExample 1:\nPlayer 3? Let me look.\n<ACTION><lookup_player>');
    expect(text).toContain('Example 2:\nBoth leagues.\n<ACTION>\n<list_teams>\n<league>south</league>');
    expect(text.endsWith('Example 3:\nNo need to look: 11 players.')).toBe(true);
    expect(text).not.toContain('A call:');
    expect(renderManifest([lookupPlayer], { examples: [] })).not.toContain('# Examples');
  });

  it('refuses an example that would not parse or validate, and examples with native calling', () => {
    expect(() => renderManifest([lookupPlayer], { examples: [{ calls: [{ name: 'lookup_player', args: { player_id: 0 } }] }] })).toThrow(/examples\[0\] is not a valid reply: .*player_id/);
    expect(() => renderManifest([lookupPlayer], { examples: ['ok', { calls: [{ name: 'look_up', args: {} }] }] })).toThrow(/examples\[1\] is not a valid reply/);
    expect(() => renderManifest([lookupPlayer], { examples: ['<ACTION><lookup_player>'] })).toThrow(/examples\[0\] does not parse/);
    expect(() => renderManifest([lookupPlayer], { protocol: 'native', examples: ['ok'] })).toThrow("examples show <ACTION> replies: they need protocol 'xml'");
    const provider = scriptedProvider(['ok']);
    expect(() => createAgent({ name: 'ref', provider, tools: [lookupPlayer], examples: [''] })).toThrow('createAgent "ref": examples[0] is empty');
    expect(() => createAgent({ name: 'ref', provider, examples: ['ok'] })).toThrow('createAgent "ref": examples need tools to call');
  });

  it('an agent sends the user’s examples in its system prompt', async () => {
    const provider = scriptedProvider(['ok']);
    await createAgent({ name: 'ref', provider, tools: [lookupPlayer], examples: ['Nothing to check.'] }).run('hi');
    expect(provider.requests[0]!.messages[0]!.content).toContain('# Examples\n\nExample 1:\nNothing to check.');
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
