import { describe, expect, it } from 'vitest';
import { defineTool, ToolSchemaError, type LooseArgs } from '../../src/index.js';
import { type PrepareContext } from '../../src/tools/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call } from './fixtures.js';

/** A lookup whose parameter was renamed from `id` to `player_id`; `prepare` maps the old shape. */
function lookupWith(prepare: (args: LooseArgs, context: PrepareContext) => LooseArgs | undefined) {
  const executed: unknown[] = [];
  const seen: { args: LooseArgs; context: PrepareContext }[] = [];
  const lookup = defineTool({
    name: 'lookup_player',
    description: 'Find a player by id.',
    parameters: {
      type: 'object',
      properties: { player_id: { type: 'string', maxLength: 16 }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['player_id'],
      additionalProperties: false,
    },
    prepareArguments: (args, context) => {
      seen.push({ args: structuredClone(args), context });
      return prepare(args, context);
    },
    execute: (args) => {
      executed.push(args);
      return { name: 'Ana' };
    },
  });
  return { lookup, executed, seen };
}

const renameId = ({ id, ...rest }: LooseArgs) => (id === undefined ? undefined : { ...rest, player_id: id });

describe('prepareArguments', () => {
  it('maps legacy XML arguments before they are checked, and the call runs with the mapped ones', async () => {
    const { lookup, executed, seen } = lookupWith(renameId);
    const provider = scriptedProvider([action(call('lookup_player', { id: '7' })), 'Ana.']);
    const { agent, events } = testAgent({ provider, tools: [lookup] });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('final_answer');
    expect(executed).toEqual([{ player_id: '7' }]);
    expect(seen[0]).toEqual({ args: { id: '7' }, context: { callId: 'tester/1.1.1', name: 'lookup_player', format: 'xml' } });
    expect(events.find('action.parsed')!.data.calls[0]!.args).toEqual({ player_id: '7' });
    expect(events.types()).not.toContain('tool.rejected');
  });

  it('gives repeated XML elements as a list of texts, and reads a returned list back as repeated elements', async () => {
    const { lookup, executed, seen } = lookupWith((args) => ({ player_id: args.player_id, tags: args.tag }));
    const provider = scriptedProvider(['<ACTION><lookup_player><player_id>7</player_id><tag>a</tag><tag>b</tag></lookup_player></ACTION>', 'ok']);
    const { agent } = testAgent({ provider, tools: [lookup] });
    await agent.run('go');
    expect(seen[0]!.args).toEqual({ player_id: '7', tag: ['a', 'b'] });
    expect(executed).toEqual([{ player_id: '7', tags: ['a', 'b'] }]);
  });

  it('reads non-string values returned for an XML call as JSON text, converted by the schema', async () => {
    const executed: unknown[] = [];
    const order = defineTool({
      name: 'order',
      description: 'Order items.',
      parameters: {
        type: 'object',
        properties: {
          count: { type: 'integer' },
          rush: { type: 'boolean' },
          address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
        required: ['count', 'address'],
      },
      // The old form was one "3 to Lyon" string.
      prepareArguments: ({ text, ...rest }) => {
        if (typeof text !== 'string') return undefined;
        const [count, city] = text.split(' to ');
        return { ...rest, count: Number(count), rush: false, address: { city } };
      },
      execute: (args) => void executed.push(args),
    });
    const provider = scriptedProvider(['<ACTION><order><text>3 to Lyon</text></order></ACTION>', 'ok']);
    const { agent } = testAgent({ provider, tools: [order] });
    await agent.run('go');
    expect(executed).toEqual([{ count: 3, rush: false, address: { city: 'Lyon' } }]);
  });

  it('maps loose native arguments (a number where a string is due, an old name)', async () => {
    const { lookup, executed, seen } = lookupWith((args) => {
      const id = args.player_id ?? args.playerId;
      return { player_id: String(id) };
    });
    const provider = scriptedProvider([{ toolCalls: [{ id: 'c1', name: 'lookup_player', arguments: '{"playerId": 7}' }] }, 'Ana.']);
    const { agent } = testAgent({ provider, tools: [lookup], protocol: 'native' });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('final_answer');
    expect(seen[0]).toEqual({ args: { playerId: 7 }, context: { callId: 'c1', name: 'lookup_player', format: 'native' } });
    expect(executed).toEqual([{ player_id: '7' }]);
  });

  it('cannot bypass validation: what it returns is checked against the schema', async () => {
    const { lookup, executed } = lookupWith(() => ({ player_id: 'x'.repeat(40), extra: true }));
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Sorry.']);
    const { agent, events } = testAgent({ provider, tools: [lookup] });
    await agent.run('go');
    expect(executed).toEqual([]);
    expect(events.find('tool.rejected')!.data).toMatchObject({ code: 'invalid_arguments', name: 'lookup_player' });
  });

  it('turns a throw into an invalid_arguments rejection the model can correct, not a crash', async () => {
    const { lookup, executed } = lookupWith(() => {
      throw new Error('id must look like P-7');
    });
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'I could not.']);
    const { agent, events } = testAgent({ provider, tools: [lookup] });
    const result = await agent.run('go');
    expect(result.reason).toBe('final_answer');
    expect(executed).toEqual([]);
    const rejected = events.find('tool.rejected')!.data;
    expect(rejected).toMatchObject({ code: 'invalid_arguments', category: 'validation_error' });
    expect(rejected.message).toMatch(/id must look like P-7/);
    expect(provider.requests[1]!.messages.at(-1)!.content).toMatch(/id must look like P-7/);
  });

  it.each([
    ['an array', () => ['player_id'] as unknown as LooseArgs, /must return an object/],
    ['a promise', () => Promise.resolve({ player_id: '7' }) as unknown as LooseArgs, /synchronously/],
    ['a prototype key', () => JSON.parse('{"player_id": "7", "nested": {"__proto__": {"polluted": true}}}') as LooseArgs, /__proto__/],
    ['a value that is not JSON', () => ({ player_id: '7', n: 10n }) as unknown as LooseArgs, /not JSON data/],
  ])('rejects %s as its answer', async (_, prepare, message) => {
    const { lookup, executed } = lookupWith(prepare);
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' })), 'Sorry.']);
    const { agent, events } = testAgent({ provider, tools: [lookup] });
    await agent.run('go');
    expect(executed).toEqual([]);
    expect(events.find('tool.rejected')!.data.message).toMatch(message);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('is checked by defineTool', () => {
    const base = { name: 't', description: 'd', parameters: { type: 'object' }, execute: () => 1 };
    expect(() => defineTool({ ...base, prepareArguments: 'rename' as never })).toThrow(ToolSchemaError);
    expect(() => defineTool({ ...base, prepareArguments: 'rename' as never })).toThrow(/prepareArguments must be a function/);
  });
});
