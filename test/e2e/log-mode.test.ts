import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTavern } from '../../scenes/tavern/index.js';
import { type Envelope } from '../../src/index.js';
import { createSessionLog, readLog } from '../../src/record/index.js';
import { startInspector, type Inspector } from '../../src/inspect/index.js';
import { openInspector, useBrowser, type WatchedPage } from './browser.js';
import { attrOf, parts, textOf, timelineIds } from './page-parts.js';

/**
 * A session log on the page (mode `log`): no controls, and a scrubber that re-derives the whole
 * view from the first N events — forwards and backwards — then follows the end again.
 */

const POLL = { timeout: 15_000 };
const browser = useBrowser();
let dir: string;
let events: Envelope[];
let inspector: Inspector | undefined;
let view: WatchedPage | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'troupe-e2e-log-'));
  const path = join(dir, 'tavern.jsonl');
  const log = createSessionLog(path);
  const tavern = buildTavern({ seed: 7, log, cellar: 'deny' });
  await tavern.run({ ticks: 12 });
  await log.close();
  events = readLog(path).events;
}, 60_000);
afterAll(async () => {
  await view?.close();
  await inspector?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The scene as the first `count` events leave it: the tick, and each agent's machine state. */
function after(count: number): { tick: number; states: Map<string, string> } {
  let tick = 0;
  const states = new Map<string, string>();
  for (const event of events.slice(0, count)) {
    if (event.type === 'scene.tick') tick = event.data.tick;
    if (event.type === 'agent.state' && event.agent !== undefined) states.set(event.agent, event.data.to);
  }
  return { tick, states };
}

const shown = (list: readonly Envelope[]) => list.filter((event) => event.type !== 'llm.delta').map((event) => event.id);

describe('the inspector page on a session log', () => {
  it('scrubs through time: the view is the scene after the first N events', async () => {
    inspector = await startInspector({ events, port: 0, onNotice: () => {} });
    view = await openInspector(await browser(), inspector.url);
    const { page } = view;
    const ui = parts(page);
    const range = page.locator('#scrub-range');

    // The whole log arrives and the view follows it to the end; a log has nothing to control.
    await page.locator('#scrubber').waitFor({ state: 'visible' });
    await expect.poll(() => attrOf(range, 'max'), POLL).toBe(String(events.length));
    await expect.poll(() => textOf(ui.header.runState), POLL).toBe('stopped · ticks');
    expect(await textOf(page.locator('#mode'))).toBe('log');
    expect(await page.locator('#controls').isHidden()).toBe(true);

    // To just after the first order reached the bar.
    const firstOrder = events.findIndex((event) => event.type === 'world.changed' && event.data.path === 'tavern.orders');
    const position = firstOrder + 1;
    const orders = (events[firstOrder] as Envelope<'world.changed'>).data.value;
    await range.fill(String(position));
    await expect.poll(() => textOf(page.locator('#scrub-label')), POLL).toMatch(new RegExp(`^event ${position} of ${events.length.toLocaleString('en')}`));
    const expected = after(position);
    await expect.poll(() => textOf(ui.header.tick), POLL).toBe(String(expected.tick));
    expect((await timelineIds(page)).at(-1)).toBe(events[firstOrder]!.id);
    expect(await timelineIds(page)).toEqual(shown(events.slice(0, position)));
    expect(await textOf(ui.worldLeaf('tavern.orders'))).toBe(JSON.stringify(orders));
    for (const [agent, state] of expected.states) expect(await attrOf(ui.agentCard(agent), 'data-state')).toBe(state);

    // Back to before it: the orders are as the scene started (scene.started carries that world).
    const started = events.find((event) => event.type === 'scene.started') as Envelope<'scene.started'>;
    const startingOrders = (started.data.world as { tavern: { orders: unknown } }).tavern.orders;
    expect(startingOrders).not.toEqual(orders);
    await range.fill(String(firstOrder));
    await expect.poll(() => textOf(ui.worldLeaf('tavern.orders')), POLL).toBe(JSON.stringify(startingOrders));
    expect(await timelineIds(page)).toEqual(shown(events.slice(0, firstOrder)));

    // The start: nothing has happened; the end: everything has, and the view follows the log again.
    await page.click('#scrub-start');
    await expect.poll(() => ui.timelineRows().count(), POLL).toBe(0);
    expect(await textOf(ui.header.runState)).toBe('waiting');
    await page.click('#scrub-end');
    await expect.poll(() => timelineIds(page), POLL).toEqual(shown(events).slice(-2000));
    expect(await textOf(ui.header.runState)).toBe('stopped · ticks');
    expect(view.errors).toEqual([]);
  }, 60_000);
});
