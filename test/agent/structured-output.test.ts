import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createAgent, scriptedProvider, type Envelope } from '../../src/index.js';
import { rosterTools } from './fixtures.js';

const VERDICT = {
  type: 'object',
  properties: {
    winner: { type: 'string', enum: ['red', 'blue'] },
    score: { type: 'integer', minimum: 0 },
    note: { type: 'string', default: '' },
  },
  required: ['winner', 'score'],
  additionalProperties: false,
} as const;

const LOOKUP = '<ACTION><lookup_player><player_id>7</player_id></lookup_player></ACTION>';

function observe(agent: ReturnType<typeof createAgent>) {
  const texts: string[] = [];
  agent.bus.on('agent.observation', (event: Envelope<'agent.observation'>) => void texts.push(event.data.text));
  return texts;
}

describe('structured output', () => {
  it('a valid answer becomes result.output, defaults filled in; the text stays in result.text', async () => {
    const agent = createAgent({ name: 'judge', provider: scriptedProvider(['{"winner": "red", "score": 3}']), output: VERDICT });
    const result = await agent.run('Who won?');
    expect(result).toMatchObject({ reason: 'final_answer', text: '{"winner": "red", "score": 3}', output: { winner: 'red', score: 3, note: '' } });
  });

  it('takes an answer that is one fenced ```json block', async () => {
    const agent = createAgent({ name: 'judge', provider: scriptedProvider(['```json\n{"winner": "blue", "score": 1}\n```']), output: VERDICT });
    expect((await agent.run('Who won?')).output).toEqual({ winner: 'blue', score: 1, note: '' });
  });

  it('an answer that does not fit is a correction naming every issue; the corrected one is the output', async () => {
    const provider = scriptedProvider(['Red won, 3 to 1.', '{"winner": "green", "score": -1, "mvp": "Ana"}', '{"winner": "red", "score": 3}']);
    const agent = createAgent({ name: 'judge', provider, output: VERDICT });
    const observed = observe(agent);
    const result = await agent.run('Who won?');
    expect(observed[0]).toMatch(/^Your final answer does not fit the output schema: The answer is not JSON: .*\nAnswer again with only the corrected JSON\.$/);
    expect(observed[1]).toBe(
      [
        'Your final answer does not fit the output schema: Unknown field "mvp". Allowed: winner, score, note.',
        '- Field "winner" is the string "green", which is not allowed. Use one of: "red", "blue".',
        '- Field "score" must be >= 0, got number -1.',
        'Answer again with only the corrected JSON.',
      ].join('\n'),
    );
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('<OBSERVATION>') });
    expect(result).toMatchObject({ reason: 'final_answer', rounds: 3, output: { winner: 'red', score: 3 } });
    expect(result.stats.corrections).toBe(2);
    expect(result.issues).toBeUndefined();
  });

  it('corrections run out: error, no output, the last issues in result.issues', async () => {
    const agent = createAgent({ name: 'judge', provider: scriptedProvider(['Red.', 'Red!', '{"winner": "red"}']), output: VERDICT, maxCorrections: 3 });
    const result = await agent.run('Who won?');
    expect(result.reason).toBe('error');
    expect(result.output).toBeUndefined();
    expect(result.error).toMatch(/^the model made 3 invalid rounds in a row \(maxCorrections 3\); last problem: Missing required field "score"/);
    expect(result.issues![0]).toMatchObject({ category: 'validation_error', keyword: 'required', property: 'score' });
  });

  it('with tools (XML): calls run as usual, the prompt says how to answer, and no schema goes on the wire', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([LOOKUP, '{"winner": "red", "score": 7}']);
    const agent = createAgent({ name: 'judge', tools, provider, output: VERDICT });
    const result = await agent.run('Who won?');
    expect(executed).toEqual(['lookup_player:7']);
    expect(result.output).toEqual({ winner: 'red', score: 7, note: '' });
    const system = provider.requests[0]!.messages[0]!.content;
    expect(system).toContain('# Final answer\n\nWhen you are done (with no <ACTION> block), reply with only a JSON value that matches this JSON Schema');
    expect(system).toContain('"enum": [\n        "red",\n        "blue"\n      ]');
    expect(provider.requests[0]!.output).toBeUndefined();
  });

  it('XML with no tool to call, and native: the schema goes to the provider as request.output', async () => {
    const xml = scriptedProvider(['{"winner": "red", "score": 1}']);
    await createAgent({ name: 'judge', provider: xml, output: VERDICT }).run('Who won?');
    expect(xml.requests[0]!.output).toEqual({ name: 'output', schema: VERDICT });
    const { tools } = rosterTools();
    const native = scriptedProvider([{ toolCalls: [{ id: 'c1', name: 'lookup_player', arguments: '{"player_id":"7"}' }] }, '{"winner": "blue", "score": 2}']);
    const agent = createAgent({ name: 'judge', tools, provider: native, protocol: 'native', output: VERDICT });
    const result = await agent.run('Who won?');
    expect(native.requests.map((request) => request.output?.name)).toEqual(['output', 'output']);
    expect(native.requests[0]!.messages[0]!.content).not.toContain('# Final answer');
    expect(result.output).toEqual({ winner: 'blue', score: 2, note: '' });
  });

  it('the final-answer nudge: a fitting answer is taken, an unfitting one leaves no output', async () => {
    const { tools } = rosterTools();
    const fits = createAgent({ name: 'judge', tools, provider: scriptedProvider([LOOKUP, '{"winner": "red", "score": 1}']), output: VERDICT, maxRounds: 1 });
    expect(await fits.run('Who won?')).toMatchObject({ reason: 'max_rounds', output: { winner: 'red', score: 1 } });
    const unfit = createAgent({ name: 'judge', tools, provider: scriptedProvider([LOOKUP, 'Red, surely.']), output: VERDICT, maxRounds: 1 });
    const result = await unfit.run('Who won?');
    expect(result.reason).toBe('max_rounds');
    expect(result.output).toBeUndefined();
  });

  it('a Standard Schema (zod): its JSON Schema is shown and checked, then its own checks run and its output is the value', async () => {
    const schema = z.object({
      winner: z.enum(['red', 'blue']),
      score: z.number().int().refine((score) => score % 2 === 1, 'must be odd'),
    });
    const provider = scriptedProvider(['{"winner": "red", "score": 2}', '{"winner": "red", "score": 3}']);
    const agent = createAgent({ name: 'judge', provider, output: schema });
    const observed = observe(agent);
    const result = await agent.run('Who won?');
    expect(provider.requests[0]!.output!.schema).toMatchObject({ type: 'object', required: ['winner', 'score'] });
    expect(observed[0]).toContain('Field "score": must be odd');
    expect(result.output).toEqual({ winner: 'red', score: 3 });
  });

  it('refuses an output that is not a schema of an object, or not a valid schema', () => {
    const make = (output: unknown) => () => createAgent({ name: 'judge', provider: scriptedProvider([]), output: output as never });
    expect(make('json')).toThrow(ConfigError);
    expect(make({ type: 'array', items: { type: 'string' } })).toThrow('createAgent "judge": output must describe an object (type "object"), got type "array"');
    expect(make({ type: 'object', properties: { id: { type: 'strin' } } })).toThrow(/createAgent "judge": output at \/properties\/id\/type/);
  });

  it('one schema object is compiled once for every agent that uses it', async () => {
    const { compileOutput } = await import('../../src/agent/output-schema.js');
    expect(compileOutput(VERDICT, 'a')).toBe(compileOutput(VERDICT, 'b'));
  });
});
