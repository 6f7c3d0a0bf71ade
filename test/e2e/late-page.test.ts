import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.js';
import { parts, textOf } from './page-parts.js';
import { useStagedPages } from './stage.js';

/**
 * A page opened late, after the server's history has let the run's first events go: it says how
 * many it can no longer get, and every agent shows its whole run — turns, calls, last words, how
 * its last run ended — from the server's summary of the events it missed, not "no turn yet".
 */

const POLL = { timeout: 20_000 };
const staged = useStagedPages();

const sweep = defineTool({
  name: 'sweep',
  description: 'Sweep the floor.',
  parameters: { type: 'object', properties: {} },
  execute: () => 'swept',
});

const cast = [
  // Speaks once, at the start: every event of hers is long gone when the page opens.
  { name: 'greeter', brain: () => 'Welcome to the Flagon!', triggers: ['start' as const] },
  // Sweeps every tick: a call per turn.
  { name: 'sweeper', tools: [sweep], brain: () => '<ACTION><sweep></sweep></ACTION>', triggers: [{ every: 1 }] },
];

describe('the inspector page, opened late', () => {
  it('shows a gap notice with the count it missed, and each agent’s whole run', async () => {
    const stage = await staged.stage({ name: 'late-night', cast, historySize: 60 });
    await stage.run(20);
    const evicted = stage.history.evicted;
    expect(evicted).toBeGreaterThan(100);

    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);
    const missed = page.locator('#missed');
    await expect.poll(() => missed.isVisible(), POLL).toBe(true);
    expect(await textOf(missed)).toBe(`${evicted.toLocaleString('en')} earlier events missed`);
    expect(await missed.getAttribute('title')).toContain('the server keeps the last 60 events');

    // Every event of the greeter was evicted: her card comes from the server's summary.
    const greeter = ui.agentCard('greeter');
    await expect.poll(() => textOf(greeter.locator('.agent-meta')), POLL).toBe('turn 1 · round 1 · start');
    expect(await textOf(greeter.locator('.agent-said'))).toBe('“Welcome to the Flagon!”');
    expect(await textOf(greeter.locator('.agent-counts'))).toBe('0 calls · final answer');
    // The sweeper's turns: the summary's, plus the ones the held events replay, once each.
    await expect.poll(() => textOf(ui.agentCard('sweeper').locator('.agent-meta')), POLL).toMatch(/^turn 20 · round 1 · timer/);
    expect(await textOf(ui.agentCard('sweeper').locator('.agent-counts'))).toBe('20 calls');
    expect(await page.locator('.agent-meta', { hasText: 'no turn yet' }).count()).toBe(0);
    expect(view.errors).toEqual([]);
  }, 60_000);

  it('shows no notice when the history still holds the whole run', async () => {
    const stage = await staged.stage({ name: 'early-night', cast });
    await stage.run(3);
    const view = await staged.page(stage);
    const ui = parts(view.page);
    await expect.poll(() => textOf(ui.agentCard('sweeper').locator('.agent-meta')), POLL).toMatch(/^turn 3 /);
    expect(await view.page.locator('#missed').isHidden()).toBe(true);
  }, 60_000);
});
