import { describe, expect, it } from 'vitest';
import { createAgent, createBus, createScene, defineTool, scriptedProvider, ToolError, type Usage } from '../../src/index.js';

const usage = (inputTokens: number, outputTokens: number): Usage => ({ inputTokens, outputTokens, totalTokens: inputTokens + outputTokens });

/** A bus whose clock moves 5 ms at each reading, so that every time in the record is known. */
function ticking() {
  let now = 1_000;
  return createBus({ clock: () => (now += 5) });
}

function tools() {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look a player up.',
    readOnly: true,
    parameters: { type: 'object', properties: { id: { type: 'string', maxLength: 10 } }, required: ['id'] },
    execute: ({ id }) => {
      if (id === 'x') throw new ToolError('no player x', { kind: 'not_found' });
      return { id, name: 'Ana' };
    },
  });
  const pay = defineTool({
    name: 'pay',
    description: 'Pay someone.',
    parameters: { type: 'object', properties: { to: { type: 'string', maxLength: 10 } }, required: ['to'] },
    needsApproval: true,
    execute: () => 'paid',
  });
  return [lookup, pay];
}

describe("a run's record", () => {
  it('holds every call with its arguments, output or error, times, attempts and refusals', async () => {
    const provider = scriptedProvider([
      { text: '<ACTION><lookup><id>7</id></lookup></ACTION>', usage: usage(100, 10) },
      { text: '<ACTION><lookup><id>x</id></lookup></ACTION>', usage: usage(120, 12) },
      { text: '<ACTION><lookup><nope>1</nope></lookup></ACTION>', usage: usage(140, 14) },
      { text: '<ACTION><pay><to>bo</to></pay></ACTION>', usage: usage(160, 16) },
      { text: 'Ana is player 7.', usage: usage(180, 18) },
    ]);
    const agent = createAgent({ name: 'clerk', tools: tools(), provider, bus: ticking(), instructions: 'You look players up.' });
    agent.bus.on('tool.approval.requested', (event) => void queueMicrotask(() => agent.deny(event.data.callId, 'not today')));
    const result = await agent.run('Who is player 7?');

    expect(result.reason).toBe('final_answer');
    const [found, missing, rejected, denied] = result.calls;
    expect(result.calls).toHaveLength(4);
    expect(found).toMatchObject({ callId: 'clerk/1.1.1', name: 'lookup', round: 1, outcome: 'completed', attempts: 1, args: { id: '7' }, output: { id: '7', name: 'Ana' } });
    expect(found!.endedAt! - found!.startedAt!).toBe(found!.durationMs);
    expect(found!.startedAt).toBeGreaterThan(1_000);
    expect(missing).toMatchObject({ name: 'lookup', round: 2, outcome: 'failed', args: { id: 'x' }, error: { kind: 'not_found', message: 'no player x', retryable: false } });
    expect(missing).not.toHaveProperty('output');
    expect(rejected).toMatchObject({ name: 'lookup', round: 3, outcome: 'rejected', attempts: 0, rejection: { code: 'invalid_arguments' } });
    expect(rejected!.rejection!.issues.length).toBeGreaterThan(0);
    expect(rejected).not.toHaveProperty('startedAt');
    expect(denied).toMatchObject({ name: 'pay', round: 4, outcome: 'denied', args: { to: 'bo' }, reason: 'not today' });

    // The event keeps its shape: the calls that were dispatched or denied, without the details.
    expect(result.stats.history.map((record) => record.outcome)).toEqual(['completed', 'failed', 'denied']);
    expect(Object.keys(result.stats.history[0]!).sort()).toEqual(['attempts', 'callId', 'durationMs', 'name', 'outcome', 'round']);
  });

  it('holds one record per model call, with its latency and usage, and the whole conversation', async () => {
    const provider = scriptedProvider([
      { text: '<ACTION><lookup><id>7</id></lookup></ACTION>', usage: usage(100, 10) },
      { text: 'Ana.', usage: usage(130, 3) },
    ]);
    const agent = createAgent({ name: 'clerk', tools: tools(), provider, bus: ticking(), instructions: 'You look players up.' });
    const result = await agent.run('Who is player 7?');

    expect(result.modelCalls).toEqual([
      expect.objectContaining({ round: 1, finishReason: 'stop', usage: usage(100, 10) }),
      expect.objectContaining({ round: 2, finishReason: 'stop', usage: usage(130, 3) }),
    ]);
    for (const call of result.modelCalls) expect(call.latencyMs).toBe(call.endedAt - call.startedAt);
    expect(result.modelCalls[0]!.latencyMs).toBeGreaterThan(0);
    expect(result.usage).toMatchObject(usage(230, 13));

    expect(result.contextLength).toBe(2);
    expect(result.messages.slice(0, result.contextLength).map((message) => message.role)).toEqual(['system', 'user']);
    expect(result.messages.slice(result.contextLength).map((message) => message.role)).toEqual(['assistant', 'user', 'assistant']);
    expect(result.messages.at(-1)!.content).toBe('Ana.');
  });

  it('marks the nudge, and counts the kept history as context with memory', async () => {
    const provider = scriptedProvider(['<ACTION><lookup><id>7</id></lookup></ACTION>', 'Ana.', 'Still Ana.']);
    const agent = createAgent({ name: 'clerk', tools: tools(), provider, maxRounds: 1, memory: true });
    const first = await agent.run('Who is player 7?');
    expect(first.reason).toBe('max_rounds');
    expect(first.modelCalls.map((call) => call.nudge === true)).toEqual([false, true]);
    const second = await agent.run('And again?');
    expect(second.contextLength).toBe(first.messages.length + 1);
    expect(second.messages.at(second.contextLength - 1)).toMatchObject({ role: 'user', content: 'And again?' });
  });

  it("survives a snapshot: a resumed run's record still holds the calls made before it", async () => {
    const provider = scriptedProvider(['<ACTION><pay><to>bo</to></pay></ACTION>', 'Paid.']);
    const agent = createAgent({ name: 'clerk', tools: tools(), provider });
    const running = agent.run('Pay Bo.');
    await new Promise((resolve) => setTimeout(resolve, 0));
    const snapshot = JSON.parse(JSON.stringify(agent.snapshot()));
    agent.abort();
    await running;

    const again = createAgent({ name: 'clerk', tools: tools(), provider: scriptedProvider(['Paid.']) });
    const resumed = again.resume(snapshot);
    await new Promise((resolve) => setTimeout(resolve, 0));
    again.approve(again.pendingApprovals()[0]!.callId);
    const result = (await resumed)!;
    expect(result.calls).toEqual([expect.objectContaining({ name: 'pay', outcome: 'completed', output: 'paid', args: { to: 'bo' } })]);
    expect(result.modelCalls.map((call) => call.round)).toEqual([1, 2]);
    expect(result.contextLength).toBe(2);
  });
});

describe("a scene's record", () => {
  it('says what each agent spent', async () => {
    const scene = createScene({ name: 'inn', seed: 1, schedule: 'every-tick' });
    const [lookup] = tools();
    const talker = (tokens: number) => scriptedProvider(() => ({ text: '<ACTION><lookup><id>7</id></lookup></ACTION>', usage: usage(tokens, 1) }));
    scene.add({ name: 'ana', tools: [lookup!], provider: talker(10) });
    scene.add({ name: 'bo', tools: [lookup!], provider: talker(20) });
    const result = await scene.run({ ticks: 3 });

    expect(result.agents).toEqual({
      ana: { turns: 3, usage: usage(30, 3) },
      bo: { turns: 3, usage: usage(60, 3) },
    });
    expect(scene.agents.get('bo')!.spent).toEqual(result.agents!.bo);
    expect(result.usage.tokens).toBe(96);
  });

  it("keeps each agent's spending across a snapshot, and reports a brain's turns with no tokens", async () => {
    const build = () => {
      const scene = createScene({ name: 'inn', seed: 1, schedule: 'every-tick' });
      const [lookup] = tools();
      scene.add({ name: 'ana', tools: [lookup!], provider: scriptedProvider(() => ({ text: 'Hm.', usage: usage(10, 1) })) });
      scene.add({ name: 'npc', tools: [lookup!], brain: () => 'Hm.' });
      return scene;
    };
    const first = build();
    await first.step();
    await first.step();
    const snapshot = JSON.parse(JSON.stringify(first.snapshot()));
    await first.stop();

    const second = build();
    second.restore(snapshot);
    await second.step();
    const result = await second.stop();
    expect(result.agents).toEqual({ ana: { turns: 3, usage: usage(30, 3) }, npc: { turns: 3, usage: usage(0, 0) } });
  });
});
