import { describe, expect, it } from 'vitest';
import { defineTool, scriptedProvider, ToolError } from '../../src/index.js';
import { attrOf, parts, textOf } from './page-parts.js';
import { useStagedPages, type Stage } from './stage.js';

/**
 * The inspector page follows a live scene: agents and their machine states, speech, tool calls
 * with arguments, status and duration, corrections and observations, the world, the timeline and
 * its filters, and the pause / step / resume controls of a stepped clock.
 */

const POLL = { timeout: 15_000 };
const staged = useStagedPages();

/**
 * An innkeeper who pours (streaming her words), a guest whose payment fails and who then calls a
 * tool that does not exist, and a bell that keeps the scene ticking.
 */
function tavernCast() {
  const pour = defineTool({
    name: 'pour',
    description: 'Pour a drink.',
    parameters: { type: 'object', properties: { drink: { type: 'string' } }, required: ['drink'], additionalProperties: false },
    execute: async ({ drink }, { agent }) => {
      stageRef().scene.world.set('bar.poured', 1, { agent });
      return `poured one ${String(drink)}`;
    },
  });
  const pay = defineTool({
    name: 'pay',
    description: 'Pay for a drink.',
    parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'], additionalProperties: false },
    execute: () => {
      throw new ToolError('your purse is empty', { kind: 'execution' });
    },
  });
  const innkeeper = scriptedProvider(['Welcome, traveller! What will it be?\n<ACTION><pour><drink>ale</drink></pour></ACTION>'], { stream: { chunkSize: 4 } });
  const guest = scriptedProvider(['Here is my coin.\n<ACTION><pay><amount>3</amount></pay></ACTION>', '<ACTION><tip><amount>1</amount></tip></ACTION>']);
  return {
    providers: [innkeeper, guest],
    cast: [
      { name: 'innkeeper', provider: innkeeper, tools: [pour], triggers: ['start' as const] },
      { name: 'guest', provider: guest, tools: [pay], rounds: 2, triggers: ['start' as const] },
      // Rings every tick and says nothing: the scene never goes quiet before its last tick.
      { name: 'bell', brain: () => null, triggers: [{ every: 1 }] },
    ],
  };
}

/** The stage of the test that is running, for the tools of its cast. */
let current: Stage | undefined;

function stageRef(): Stage {
  if (current === undefined) throw new Error('no stage');
  return current;
}

describe('the inspector page on a live scene', () => {
  it('shows agents, states, speech, tool calls, corrections, the world, and obeys pause, step and resume', async () => {
    const { cast, providers } = tavernCast();
    const stage = await staged.stage({ name: 'tavern-night', cast, world: { bar: { poured: 0 } }, paused: true });
    current = stage;
    const running = stage.run(3);
    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);

    // Before the first tick: the cast, idle, and the scene held by the gate.
    await expect.poll(() => ui.agentCards().count(), POLL).toBe(3);
    expect(await ui.agentCard('innkeeper').getAttribute('data-state')).toBe('idle');
    await expect.poll(() => textOf(ui.header.runState), POLL).toBe('paused');
    expect(await page.locator('#scene-name').textContent()).toBe('tavern-night');
    expect(await ui.header.step.isEnabled()).toBe(true);
    expect(await ui.header.resume.isVisible()).toBe(true);

    // One step: one tick, both agents take their turn.
    await ui.header.step.click();
    await expect.poll(() => textOf(ui.header.tick), POLL).toBe('1');

    // Speech, streamed and then settled as said.
    const said = ui.speech('innkeeper');
    await expect.poll(() => attrOf(said, 'class'), POLL).toContain('phase-said');
    expect(await said.locator('.speech-text').textContent()).toBe('Welcome, traveller! What will it be?');

    // A completed call with its argument, status and duration.
    const pour = ui.call('innkeeper', 'pour');
    await expect.poll(() => attrOf(pour, 'data-status'), POLL).toBe('completed');
    expect(await pour.locator('.args').textContent()).toBe('drinkale');
    expect(await pour.locator('.duration').textContent()).toMatch(/^\d+ ms$/);
    expect(await pour.locator('.outcome.result').textContent()).toBe('→ poured one ale');

    // A failed call, then a correction: the tool that does not exist.
    const pay = ui.call('guest', 'pay');
    await expect.poll(() => attrOf(pay, 'data-status'), POLL).toBe('failed');
    expect(await pay.locator('.outcome.error').textContent()).toContain('your purse is empty');
    const tip = ui.call('guest', 'tip');
    await expect.poll(() => attrOf(tip, 'data-status'), POLL).toBe('rejected');
    expect(await tip.locator('.outcome.error').textContent()).toContain('unknown_tool');
    expect(await ui.entries('guest', 'observation').count()).toBeGreaterThanOrEqual(2);

    // Machine states settle, and the world shows the change the tool made.
    await expect.poll(() => attrOf(ui.agentCard('innkeeper'), 'data-state'), POLL).toBe('done');
    await expect.poll(() => attrOf(ui.agentCard('guest'), 'data-state'), POLL).toBe('done');
    expect(await ui.agentCard('guest').locator('.agent-counts').textContent()).toContain('1 failed');
    expect(await ui.agentCard('guest').locator('.agent-counts').textContent()).toContain('1 correction');
    await expect.poll(() => textOf(ui.worldLeaf('bar')), POLL).toBe('{"poured":1}');

    // Resume: the scene runs its last ticks and stops.
    await ui.header.resume.click();
    const result = await running;
    expect(result.reason).toBe('ticks');
    await expect.poll(() => textOf(ui.header.runState), POLL).toBe('stopped · ticks');
    for (const provider of providers) provider.assertConsumed();
    expect(view.errors).toEqual([]);
  }, 60_000);

  it('filters the timeline by agent and by type, and shows an event whole', async () => {
    const { cast } = tavernCast();
    const stage = await staged.stage({ cast, world: { bar: { poured: 0 } } });
    current = stage;
    await stage.run(1);
    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);
    const shown = stage.events.filter((event) => !event.type.startsWith('llm.delta'));
    await expect.poll(() => ui.timelineRows().count(), POLL).toBe(shown.length);

    await page.selectOption('#timeline-agent', 'guest');
    const guestRows = stage.events.filter((event) => event.agent === 'guest' && event.type !== 'llm.delta');
    await expect.poll(() => ui.timelineRows().count(), POLL).toBe(guestRows.length);
    expect(new Set(await ui.timelineRows().evaluateAll((rows) => rows.map((row) => row.getAttribute('data-agent'))))).toEqual(new Set(['guest']));

    await page.click('#timeline-types .chip[data-family="agent"]');
    const withoutAgentEvents = guestRows.filter((event) => !event.type.startsWith('agent.'));
    await expect.poll(() => ui.timelineRows().count(), POLL).toBe(withoutAgentEvents.length);

    // Deltas are off by default; on, the innkeeper's streamed words appear as rows.
    await page.selectOption('#timeline-agent', 'innkeeper');
    await page.click('#timeline-types .chip[data-family="delta"]');
    await expect.poll(() => page.locator('#timeline .t-row[data-type="llm.delta"]').count(), POLL).toBe(
      stage.events.filter((event) => event.type === 'llm.delta').length,
    );

    // A row opens the whole envelope.
    const completed = stage.events.find((event) => event.type === 'tool.completed' && event.agent === 'innkeeper')!;
    await page.click(`#timeline .t-row[data-id="${completed.id}"]`);
    const detail = JSON.parse((await page.locator('#event-detail').textContent()) ?? '') as { id: string; data: { output: string } };
    expect(detail.id).toBe(completed.id);
    expect(detail.data.output).toBe('poured one ale');
    expect(view.errors).toEqual([]);
  }, 60_000);

  it('streams speech as it is written, and strikes through an attempt a retry superseded', async () => {
    const stage = await staged.stage({ cast: [] });
    current = stage;
    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);
    const meta = { scene: 'stage', agent: 'bard' };
    const bus = stage.scene.bus;

    // What a streaming provider publishes: deltas of attempt 1, a cut, attempt 2 from scratch.
    bus.publish('llm.request', { round: 1, provider: 'test', messageCount: 1, nudge: false }, meta);
    bus.publish('llm.delta', { round: 1, text: 'Once upon', attempt: 1 }, meta);
    bus.publish('llm.delta', { round: 1, text: ' a ti', attempt: 1 }, meta);
    const first = ui.speech('bard').first();
    await expect.poll(() => textOf(first.locator('.speech-text')), POLL).toBe('Once upon a ti');
    expect(await first.getAttribute('class')).toContain('phase-streaming');

    bus.publish('llm.superseded', { round: 1, attempt: 1, reason: 'network' }, meta);
    await expect.poll(() => attrOf(first, 'class'), POLL).toContain('phase-superseded');
    expect(await first.locator('.speech-text').evaluate((node) => (globalThis as unknown as { getComputedStyle(node: unknown): { textDecorationLine: string } }).getComputedStyle(node).textDecorationLine)).toBe('line-through');

    bus.publish('llm.delta', { round: 1, text: 'Once upon a time, ', attempt: 2 }, meta);
    bus.publish('llm.delta', { round: 1, text: 'a tavern.', attempt: 2 }, meta);
    bus.publish('llm.response', { round: 1, text: 'Once upon a time, a tavern.', finishReason: 'stop', latencyMs: 5 }, meta);
    bus.publish('agent.said', { text: 'Once upon a time, a tavern.' }, meta);
    const second = ui.speech('bard').nth(1);
    await expect.poll(() => attrOf(second, 'class'), POLL).toContain('phase-said');
    expect(await second.locator('.speech-text').textContent()).toBe('Once upon a time, a tavern.');
    expect(await ui.speech('bard').count()).toBe(2);
    expect(await first.getAttribute('class')).toContain('phase-superseded');
    expect(view.errors).toEqual([]);
  }, 60_000);
});
