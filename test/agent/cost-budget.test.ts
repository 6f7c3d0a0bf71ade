import { describe, expect, it } from 'vitest';
import { Budget, ConfigError, costOf, createAgent, createScene, DEFAULT_PRICES, priceFor, scriptedProvider } from '../../src/index.js';
import { recordEvents } from '../../src/testing/index.js';
import { act, noteTool, ofType, recordedScene } from '../scene/helpers.js';

/** A model that reports 1,000 input and 500 output tokens a call. */
const usage = { inputTokens: 1_000, outputTokens: 500, totalTokens: 1_500 };
// At $2 / $8 per million (gpt-4.1): 0.002 + 0.004 = $0.006 a call.
const PER_CALL = 0.006;

describe('prices', () => {
  it('finds a model by its name, or by its name without a date or -latest', () => {
    expect(priceFor('gpt-4.1', DEFAULT_PRICES)).toEqual({ input: 2, output: 8 });
    expect(priceFor('gpt-4.1-2025-04-14', DEFAULT_PRICES)).toEqual({ input: 2, output: 8 });
    expect(priceFor('claude-haiku-4-5-20251001', DEFAULT_PRICES)).toEqual({ input: 1, output: 5 });
    // Never a neighbour's price: an unknown variant is unknown.
    expect(priceFor('gpt-4.1-turbo', DEFAULT_PRICES)).toBeUndefined();
    expect(priceFor(undefined, DEFAULT_PRICES)).toBeUndefined();
  });

  it('costs a call at its rates, and at the long-prompt rates past their threshold', () => {
    expect(costOf(usage, { input: 2, output: 8 })).toBe(PER_CALL);
    const pro = DEFAULT_PRICES['gemini-2.5-pro']!;
    expect(costOf({ inputTokens: 100_000, outputTokens: 1_000 }, pro)).toBe(0.135);
    expect(costOf({ inputTokens: 300_000, outputTokens: 1_000 }, pro)).toBe(0.765);
  });

  it('refuses a malformed price table, naming the entry', () => {
    const provider = scriptedProvider(['hi']);
    expect(() => createAgent({ name: 'a', provider, prices: { script: { input: 1 } as never } })).toThrow(
      /createAgent "a": prices\["script"\] must have input and output as finite numbers ≥ 0/,
    );
    expect(() => createScene({ name: 's', prices: { x: { input: -1, output: 1 } } })).toThrow(/createScene "s": prices\["x"\]/);
  });
});

describe('an agent’s cost', () => {
  it('is reported in each call’s usage and the run’s, marked estimated when the tokens were', async () => {
    const provider = scriptedProvider([{ text: 'Ana.', usage }, 'Bea.'], { model: 'gpt-4.1' });
    const agent = createAgent({ name: 'a', provider });
    const events = recordEvents(agent.bus);
    const first = await agent.run('hi');
    expect(first.usage).toEqual({ ...usage, costUsd: PER_CALL });
    expect(events.find('llm.response')!.data.usage).toEqual({ ...usage, costUsd: PER_CALL });
    // A reply without usage: troupe's estimate, and a cost worked out from it, both marked.
    const second = await agent.run('and?');
    expect(second.usage.estimated).toBe(true);
    expect(second.usage.costUsd).toBe(costOf(second.usage, { input: 2, output: 8 }));
  });

  it('takes the user’s prices over the defaults; an unpriced model reports no cost', async () => {
    const own = createAgent({ name: 'a', provider: scriptedProvider([{ text: 'x', usage }], { model: 'gpt-4.1' }), prices: { 'gpt-4.1': { input: 1, output: 1 } } });
    expect((await own.run('hi')).usage.costUsd).toBe(0.0015);
    const unknown = createAgent({ name: 'b', provider: scriptedProvider([{ text: 'x', usage }], { model: 'local-llm' }) });
    expect((await unknown.run('hi')).usage.costUsd).toBeUndefined();
  });

  it('a costUsd budget ends the run with reason budget before the call that would pass it', async () => {
    const { tool, calls } = noteTool();
    const provider = scriptedProvider(() => ({ text: act('note', { text: 'n' }), usage }), { model: 'gpt-4.1' });
    const agent = createAgent({ name: 'spender', tools: [tool], provider, budget: { costUsd: 0.015 }, maxRounds: 10 });
    const events = recordEvents(agent.bus);
    const result = await agent.run('go');
    // $0.006 a call: 0, 0.006, 0.012 are under 0.015 (3 calls); at 0.018 the budget refuses.
    expect(calls).toHaveLength(3);
    expect(result).toMatchObject({ reason: 'budget', error: 'budget "spender" exhausted: cost USD 0.018/0.015' });
    expect(result.usage.costUsd).toBe(0.018);
    expect(events.find('budget.exhausted')!.data).toEqual({ budget: 'spender', kind: 'costUsd', limit: 0.015, used: 0.018, message: result.error });
  });

  it('a costUsd budget that cannot be kept is a ConfigError, not an uncapped agent', () => {
    const provider = scriptedProvider(['hi'], { model: 'local-llm' });
    expect(() => createAgent({ name: 'a', provider, budget: { costUsd: 1 } })).toThrow(ConfigError);
    expect(() => createAgent({ name: 'a', provider, budget: { costUsd: 1 } })).toThrow(
      `createAgent "a": budget "a" caps costUsd, but there is no price for model "local-llm" (provider "scripted"): pass prices: { 'local-llm': { input, output } }`,
    );
    expect(() => createAgent({ name: 'a', provider, budget: { costUsd: 1 }, prices: { 'local-llm': { input: 0, output: 0 } } })).not.toThrow();
  });

  it('a repair’s model call is priced and charged, and refused when its model has no price', async () => {
    const { tool } = noteTool();
    const repairer = scriptedProvider([{ text: '{"text":"fixed"}', usage }], { model: 'gpt-4.1' });
    const agent = createAgent({
      name: 'r',
      tools: [tool],
      provider: scriptedProvider([{ text: '<ACTION><nope/></ACTION>', usage }, { text: 'Done.', usage }], { model: 'gpt-4.1' }),
      budget: { costUsd: 1 },
      repair: async (_call, context) => {
        await context.complete([{ role: 'user', content: 'fix it' }], { provider: repairer });
        return undefined;
      },
    });
    const result = await agent.run('go');
    expect(result.usage.costUsd).toBe(0.018);
    const unpriced = createAgent({
      name: 'u',
      tools: [tool],
      provider: scriptedProvider([{ text: '<ACTION><nope/></ACTION>', usage }, { text: 'Done.', usage }], { model: 'gpt-4.1' }),
      budget: { costUsd: 1 },
      repair: async (_call, context) => {
        await context.complete([{ role: 'user', content: 'fix it' }], { provider: scriptedProvider(['x'], { model: 'mystery' }) }).catch((error: Error) => {
          refusals.push(error.message);
        });
        return undefined;
      },
    });
    const refusals: string[] = [];
    await unpriced.run('go');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toContain('no price for model "mystery"');
  });
});

describe('a scene’s cost', () => {
  it('a scene costUsd budget, spent by agents of different models, stops the scene', async () => {
    const { scene, events } = recordedScene({ schedule: 'every-tick', budget: { costUsd: 0.01 }, prices: { house: { input: 1, output: 2 } } });
    const { tool } = noteTool();
    // gpt-4.1 costs $0.006 a call; "house" (the scene's own price) $0.002.
    scene.add({ name: 'a', tools: [tool], provider: scriptedProvider(() => ({ text: act('note', { text: 'a' }), usage }), { model: 'gpt-4.1' }) });
    scene.add({ name: 'b', tools: [tool], provider: scriptedProvider(() => ({ text: act('note', { text: 'b' }), usage }), { model: 'house' }) });
    const result = await scene.run({ ticks: 10 });
    // $0.008 a tick, both asked at once: 0 and 0.008 are under 0.01 (two ticks); at 0.016 it refuses.
    expect(result).toMatchObject({ reason: 'budget', detail: 'budget "test" exhausted: cost USD 0.016/0.01' });
    expect(result.usage).toMatchObject({ modelCalls: 4, costUsd: 0.016 });
    expect(ofType(events, 'budget.exhausted')[0]!.data).toMatchObject({ kind: 'costUsd', limit: 0.01, used: 0.016 });
  });

  it('refuses a member whose model has no price when the scene caps cost; a scripted brain needs none', () => {
    const scene = createScene({ name: 'priced', budget: { costUsd: 1 } });
    scene.add({ name: 'npc', brain: () => 'Hello.' });
    expect(() => scene.add({ name: 'llm', provider: scriptedProvider(['x'], { model: 'mystery' }) })).toThrow(/budget "priced" caps costUsd, but there is no price for model "mystery"/);
  });

  it('reports cost without a budget once a call is priced, and keeps it through a budget snapshot', async () => {
    const scene = createScene({ name: 'meter', seed: 1, schedule: 'every-tick' });
    scene.add({ name: 'a', provider: scriptedProvider(() => ({ text: 'ok', usage }), { model: 'gpt-4.1' }) });
    const result = await scene.run({ ticks: 2 });
    expect(result.usage.costUsd).toBe(2 * PER_CALL);
    const budget = new Budget('b', { costUsd: 1 });
    budget.charge({ tokens: 10, costUsd: 0.25 });
    const copy = new Budget('b', { costUsd: 1 });
    copy.restore(budget.snapshot());
    expect(copy.usage().costUsd).toBe(0.25);
    expect(new Budget('none', {}).usage().costUsd).toBeUndefined();
    expect(new Budget('capped', { costUsd: 2 }).usage().costUsd).toBe(0);
  });
});
