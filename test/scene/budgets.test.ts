import { describe, expect, it } from 'vitest';
import { createAgent, scriptedProvider } from '../../src/index.js';
import { act, noteTool, ofType, recordedScene } from './helpers.js';

describe('budgets', () => {
  it("an agent's model-call budget retires it with reason budget; the others go on", async () => {
    const { scene, events } = recordedScene({ schedule: 'every-tick' });
    const { tool, calls } = noteTool();
    scene.add({ name: 'thrifty', tools: [tool], brain: (p) => act('note', { text: `t${p.tick}` }), budget: { modelCalls: 2 } });
    scene.add({ name: 'free', tools: [tool], brain: (p) => act('note', { text: `f${p.tick}` }) });
    const result = await scene.run({ ticks: 4 });

    expect(calls.filter((call) => call.startsWith('thrifty'))).toEqual(['thrifty:t1', 'thrifty:t2']);
    expect(calls.filter((call) => call.startsWith('free'))).toHaveLength(4);
    const exhausted = ofType(events, 'budget.exhausted');
    expect(exhausted).toHaveLength(1);
    expect(exhausted[0]!.data).toMatchObject({ budget: 'thrifty', kind: 'modelCalls', limit: 2, used: 2 });
    expect(exhausted[0]!.agent).toBe('thrifty');
    const last = ofType(events, 'agent.finished').filter((event) => event.agent === 'thrifty').at(-1)!;
    expect(last.data).toMatchObject({ reason: 'budget', error: 'budget "thrifty" exhausted: model calls 2/2' });
    expect(scene.agents.get('thrifty')!.retired).toBe(true);
    expect(result.reason).toBe('ticks');
  });

  it('a scene token budget stops the scene with a clear reason, and no turn runs half-way', async () => {
    const { scene, events } = recordedScene({ schedule: 'every-tick', budget: { tokens: 100 } });
    const { tool, calls } = noteTool();
    const talker = (name: string) =>
      scriptedProvider(() => ({ text: act('note', { text: name }), usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 } }));
    scene.add({ name: 'a', tools: [tool], provider: talker('a') });
    scene.add({ name: 'b', tools: [tool], provider: talker('b') });
    const result = await scene.run({ ticks: 10 });

    // 30 tokens a call: 0, 30, 60, 90 are under 100 (4 calls); at 120 the budget refuses.
    expect(calls).toHaveLength(4);
    expect(result).toMatchObject({ reason: 'budget', detail: 'budget "test" exhausted: tokens 120/100' });
    expect(result.usage).toMatchObject({ modelCalls: 4, tokens: 120, toolCalls: 4 });
    const started = ofType(events, 'tool.started').length;
    const ended = ofType(events, 'tool.completed').length + ofType(events, 'tool.failed').length;
    expect(started).toBe(ended);
    expect(ofType(events, 'scene.stopped')[0]!.data).toMatchObject({ reason: 'budget', detail: result.detail });
  });

  it('a turn whose calls do not all fit the tool-call budget runs none of them', async () => {
    const { tool, calls } = noteTool();
    const three = `<ACTION>${['x', 'y', 'z'].map((text) => `<note><text>${text}</text></note>`).join('')}</ACTION>`;
    const agent = createAgent({
      name: 'greedy',
      tools: [tool],
      provider: scriptedProvider([act('note', { text: 'first' }), three]),
      budget: { toolCalls: 3 },
    });
    const result = await agent.run('go');
    expect(calls).toEqual(['greedy:first']);
    expect(result).toMatchObject({ reason: 'budget', error: 'budget "greedy" exhausted: tool calls 1/3 (this round needs 3)' });
  });

  it('a budget shared by two agents is spent by both', async () => {
    const { scene } = recordedScene({ schedule: 'round-robin', budget: { modelCalls: 3 } });
    scene.add({ name: 'a', brain: () => 'a' });
    scene.add({ name: 'b', brain: () => 'b' });
    const result = await scene.run({ ticks: 10 });
    expect(result).toMatchObject({ reason: 'budget', tick: 4, turns: 4 });
    expect(result.usage.modelCalls).toBe(3);
  });
});

describe('Budget', () => {
  it('refuses limits that are not an object, unknown kinds and inherited names, with the budget named', async () => {
    const { Budget } = await import('../../src/index.js');
    expect(() => new Budget('b', null as never)).toThrow('budget "b": limits must be an object like { modelCalls: 20 }');
    expect(() => new Budget('b', { calls: 3 } as never)).toThrow('budget "b": unknown limit "calls"');
    expect(() => new Budget('b', JSON.parse('{"toString": 3}') as never)).toThrow('budget "b": unknown limit "toString"');
    expect(() => new Budget('b', { tokens: -1 })).toThrow('budget "b": tokens must be a finite number ≥ 0, got -1');
  });

  it('stays exhausted with the first refusal, announced once', async () => {
    const { Budget } = await import('../../src/index.js');
    const budget = new Budget('b', { modelCalls: 1 });
    expect(budget.exhausted).toBeUndefined();
    expect(budget.refuse({ modelCalls: 1 })).toBeUndefined();
    budget.charge({ modelCalls: 1 });
    const first = budget.refuse({ modelCalls: 1 });
    expect(first).toMatchObject({ budget: 'b', kind: 'modelCalls', limit: 1, used: 1 });
    expect(budget.refuse({})).toBe(first);
    expect(budget.exhausted).toBe(first);
    expect([budget.takeAnnouncement(), budget.takeAnnouncement()]).toEqual([true, false]);
  });
});
