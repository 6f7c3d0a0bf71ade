import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTavern } from '../../scenes/tavern/index.js';
import { defineScene, type Envelope } from '../../src/index.js';
import { createSessionLog, readLog } from '../../src/record/index.js';
import { resumeScene } from '../../src/record/resume-scene.js';
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

  it('says a log its writer left open is interrupted, and marks where it was resumed', async () => {
    // The tavern stopped from outside after tick 5, resumed from its checkpoint of tick 4, and
    // that resume's writer killed after tick 8: the log ends with the run open.
    const tavern = defineScene({ description: 'the tavern', ticks: 12, create: (context) => buildTavern({ ...context, cellar: 'approve' }) });
    const path = join(dir, 'resumed.jsonl');
    const log = createSessionLog(path, { checkpoints: { everyTicks: 2 }, recipe: { scene: 'tavern', source: { kind: 'shipped' }, options: {}, seed: 7, ticks: 12, definitionHash: 'test' } });
    const scene = await tavern.create({ seed: 7, options: {}, log });
    for (let tick = 0; tick < 5; tick++) await scene.step();
    await scene.stop('interrupted');
    await log.close();
    await resumeScene(path, { definition: tavern });
    const whole = readLog(path).events;
    const keep = whole.findIndex((event) => event.type === 'scene.tick' && event.data.tick === 8) + 1;
    const lines = readFileSync(path, 'utf8').split('\n');
    const cut = join(dir, 'cut.jsonl');
    writeFileSync(cut, `${lines.slice(0, 1 + keep).join('\n')}\n`);
    appendFileSync(cut, lines[1 + keep]!.slice(0, 30));
    const logged = readLog(cut).events;
    const resume = logged.find((event) => event.type === 'log.opened' && event.data.kind === 'resume')!;

    await view?.close();
    await inspector?.close();
    inspector = await startInspector({ events: logged, port: 0, onNotice: () => {} });
    view = await openInspector(await browser(), inspector.url);
    const { page } = view;
    const ui = parts(page);
    await expect.poll(() => textOf(ui.header.runState), POLL).toBe('interrupted');
    expect(await attrOf(ui.header.runState, 'title')).toMatch(/^the writer stopped without closing the log at tick 8/);
    const marker = page.locator(`#timeline .t-row.t-resume[data-id="${resume.id}"]`);
    expect(await textOf(marker.locator('.t-sum'))).toBe('resumed at tick 5 · replayed from checkpoint 2 (tick 4)');
    // Back before the resume, the segment stopped from outside shows stopped; after it, running.
    await page.locator('#scrub-range').fill(String(logged.indexOf(resume)));
    await expect.poll(() => textOf(ui.header.runState), POLL).toBe('stopped · stopped');
    await page.locator('#scrub-range').fill(String(logged.indexOf(resume) + 1));
    await expect.poll(() => textOf(ui.header.runState), POLL).toBe('running');
    expect(view.errors).toEqual([]);
  }, 60_000);
});
