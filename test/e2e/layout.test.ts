import { describe, expect, it } from 'vitest';
import { defineTool, scriptedProvider, type CastMember } from '../../src/index.js';
import { type WatchedPage } from './browser.js';
import { parts } from './page-parts.js';
import { useStagedPages } from './stage.js';

/**
 * The page's layout as a reader meets it: in a wide window and a narrow one, with a call waiting
 * for approval, every panel is there and big enough to read, and each agent has its own colour.
 */

const staged = useStagedPages();

const NAMES = ['innkeeper', 'guard', 'bard', 'ana', 'bram', 'pip'];

/** Six talkers and a steward whose call waits for a person: the approvals panel is up. */
function cast(): CastMember[] {
  const openCellar = defineTool({
    name: 'open_cellar',
    description: 'Open the cellar door.',
    needsApproval: true,
    parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] },
    execute: () => 'open',
  });
  const talkers = NAMES.map((name) => ({ name, provider: scriptedProvider([`${name} says good evening.`]), triggers: ['start' as const] }));
  const steward = {
    name: 'steward',
    tools: [openCellar],
    provider: scriptedProvider(['<ACTION><open_cellar><reason>stew</reason></open_cellar></ACTION>']),
    triggers: ['start' as const],
  };
  return [...talkers, steward];
}

/** The height and width of each area of the page, scrolled into view first. */
async function areas(page: WatchedPage['page']): Promise<Record<string, { width: number; height: number }>> {
  const sizes: Record<string, { width: number; height: number }> = {};
  for (const [name, selector] of Object.entries({
    agents: '.agents-panel',
    transcript: '.transcript-panel',
    approvals: '.approvals-panel',
    world: '.world-panel',
    timeline: '.timeline-panel',
  })) {
    const area = page.locator(selector);
    await area.scrollIntoViewIfNeeded();
    const box = await area.boundingBox();
    sizes[name] = { width: Math.round(box?.width ?? 0), height: Math.round(box?.height ?? 0) };
  }
  return sizes;
}

describe('the inspector page layout', () => {
  for (const viewport of [
    { width: 1440, height: 900 },
    { width: 1024, height: 700 },
    { width: 800, height: 600 },
  ]) {
    it(`shows every panel at a readable size in a ${viewport.width}×${viewport.height} window, a pending approval included`, async () => {
      const stage = await staged.stage({ cast: cast(), world: { tavern: { stew: 0, ale: 12 } } });
      const running = stage.run(1);
      const requested = await stage.next('tool.approval.requested');
      const view = await staged.page(stage, viewport);
      const { page } = view;
      await parts(page).approval('steward', requested.data.callId).waitFor();
      await page.locator('#world .w-leaf').first().waitFor();
      const sizes = await areas(page);
      for (const [name, size] of Object.entries(sizes)) {
        expect({ name, wide: size.width >= 180, tall: size.height >= 100 }).toEqual({ name, wide: true, tall: true });
      }
      // The world and the timeline keep their room beside (or below) the approvals.
      expect(sizes.world!.height).toBeGreaterThanOrEqual(120);
      expect(sizes.timeline!.height).toBeGreaterThanOrEqual(160);
      stage.scene.agents.get('steward')!.agent.approve(requested.data.callId);
      await running;
      expect(view.errors).toEqual([]);
    });
  }

  it('gives each of a scene’s agents a colour of its own', async () => {
    const stage = await staged.stage({ cast: cast() });
    const running = stage.run(1);
    const requested = await stage.next('tool.approval.requested');
    const view = await staged.page(stage);
    const cards = parts(view.page).agentCards();
    await expect.poll(() => cards.count(), { timeout: 15_000 }).toBe(NAMES.length + 1);
    const colours = await view.page
      .locator('.agent-card .agent-dot')
      .evaluateAll((dots) => {
        // Runs in the page (the test's own types have no DOM).
        const styleOf = (globalThis as unknown as { getComputedStyle(node: unknown): { getPropertyValue(name: string): string } }).getComputedStyle;
        return dots.map((dot) => styleOf(dot).getPropertyValue('--hue').trim());
      });
    expect(colours.every((colour) => colour !== '')).toBe(true);
    expect(new Set(colours).size).toBe(colours.length);
    stage.scene.agents.get('steward')!.agent.approve(requested.data.callId);
    await running;
  });

  it('keeps long names and keys in bounds, and shows an observation\'s two lines whole', async () => {
    const longName = `guest-${'x'.repeat(58)}`;
    const note = defineTool({
      name: 'note',
      description: 'Write a note.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      execute: ({ text }, { agent }) => {
        stage!.scene.world.set('notes', { [String(text)]: 'kept' }, { agent });
        return 'noted_with_underscores';
      },
    });
    const key = `a_very_long_key_${'y'.repeat(120)}`;
    const stage = await staged.stage({
      cast: [{ name: longName, tools: [note], provider: scriptedProvider([`<ACTION><note><text>${key}</text></note></ACTION>`]), triggers: ['start'] }],
    });
    const view = await staged.page(stage);
    const { page } = view;
    await stage.run(1);
    const observation = page.locator('#transcript .entry.observation .observation-text').first();
    await observation.waitFor();
    await page.locator('#world .w-leaf .w-key').first().waitFor();
    const sizes = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { querySelector(selector: string): { getBoundingClientRect(): { width: number }; scrollHeight: number; clientHeight: number } } }).document;
      const width = (selector: string) => doc.querySelector(selector).getBoundingClientRect().width;
      const text = doc.querySelector('#transcript .entry.observation .observation-text');
      return {
        select: width('#timeline-agent'),
        leaf: width('#world .w-leaf'),
        key: width('#world .w-leaf .w-key'),
        value: width('#world .w-leaf .w-value'),
        cutOff: text.scrollHeight - text.clientHeight,
      };
    });
    expect(await observation.textContent()).toContain('noted_with_underscores');
    expect(sizes.select).toBeLessThanOrEqual(200);
    expect(sizes.key).toBeLessThanOrEqual(sizes.leaf / 2);
    expect(sizes.value).toBeGreaterThan(20); // "kept", on one line beside the key
    expect(sizes.cutOff).toBeLessThanOrEqual(0);
    expect(view.errors).toEqual([]);
  });
});
