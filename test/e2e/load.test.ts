import { afterAll, describe, expect, it } from 'vitest';
import { openInspector, useBrowser, type WatchedPage } from './browser.js';
import { parts, textOf } from './page-parts.js';
import { startStage, type Stage } from './stage.js';

/**
 * A flood of events: the page folds them in batches on animation frames and keeps its DOM
 * bounded (the timeline's last 2,000 rows, the transcript's last 1,200 entries), so it ends up
 * showing every event counted and stays usable. No timings are asserted: speed is for benchmarks.
 */

const POLL = { timeout: 45_000 };
const browser = useBrowser();
const AGENTS = ['ana', 'bram', 'pip', 'cora'];
const ROUNDS = 1_500;
let stage: Stage | undefined;
let view: WatchedPage | undefined;

afterAll(async () => {
  await view?.close();
  await stage?.close();
});

describe('the inspector page under a flood of events', () => {
  it('counts every event and keeps the page bounded and responsive', async () => {
    stage = await startStage({ cast: [], historySize: 100_000 });
    view = await openInspector(await browser(), stage.inspector.url);
    const { page } = view;
    const ui = parts(page);
    const bus = stage.scene.bus;

    // Each round: a streamed answer, a tool call, a world change — eight events per agent.
    for (let round = 1; round <= ROUNDS; round++) {
      for (const agent of AGENTS) {
        const meta = { scene: 'stage', agent };
        const callId = `${agent}/${round}`;
        bus.publish('llm.delta', { round, text: `Round ${round}, `, attempt: 1 }, meta);
        bus.publish('llm.delta', { round, text: 'and on we go.', attempt: 1 }, meta);
        bus.publish('agent.said', { text: `Round ${round}, and on we go.` }, meta);
        bus.publish('tool.started', { callId, name: 'count', args: { round }, attempt: 1 }, meta);
        bus.publish('tool.completed', { callId, name: 'count', args: { round }, output: round, durationMs: 1, attempt: 1 }, meta);
        bus.publish('world.changed', { path: `counts.${agent}`, value: round, tick: round }, meta);
        bus.publish('agent.state', { from: 'dispatching', to: 'observing' }, meta);
        bus.publish('agent.state', { from: 'observing', to: 'done' }, meta);
      }
      // Let the server write between bursts, as a scene's ticks would.
      if (round % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const total = stage.events.length;

    await expect.poll(() => textOf(ui.header.connection.page().locator('#event-count')), POLL).toBe(total.toLocaleString('en'));
    expect(await ui.timelineRows().count()).toBe(2_000);
    expect(await page.locator('#transcript .entry').count()).toBeLessThanOrEqual(1_200);
    // The world panel rebuilds at most a few times a second, so its last rebuild may trail the count.
    await expect.poll(() => textOf(ui.worldLeaf('counts')), POLL).toBe(JSON.stringify(Object.fromEntries(AGENTS.map((agent) => [agent, ROUNDS]))));
    expect(await textOf(ui.speech('cora').last().locator('.speech-text'))).toBe(`Round ${ROUNDS}, and on we go.`);
    expect(await page.locator('#missed').isHidden()).toBe(true);

    // Still usable: a filter rebuilds the timeline from what the page kept.
    await page.selectOption('#timeline-agent', 'pip');
    await expect.poll(() => ui.timelineRows().evaluateAll((rows) => new Set(rows.map((row) => row.getAttribute('data-agent'))).size), POLL).toBe(1);
    expect(await ui.timelineRows().count()).toBeGreaterThan(0);
    expect(view.errors).toEqual([]);
  }, 120_000);
});
