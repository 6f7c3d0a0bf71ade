import { describe, expect, it } from 'vitest';
import { type Envelope } from '../../src/index.js';
import { createEventHistory, startInspector } from '../../src/inspect/index.js';
import { attrOf, parts, timelineIds } from './page-parts.js';
import { useStagedPages } from './stage.js';

/**
 * The server goes away and comes back on the same port: the page reconnects by itself, resumes
 * after the last event it has (`Last-Event-ID`), and shows every event once — including those
 * published while it was down. A server that lost its history says so (a gap) instead.
 */

const POLL = { timeout: 20_000 };
const staged = useStagedPages();

/** A town crier who announces every tick: one line of speech per tick. */
const crier = { name: 'crier', brain: ({ tick }: { tick: number }) => `Hear ye! It is tick ${tick}.`, triggers: [{ every: 1 }] };

/** The ids the timeline shows by default (streamed deltas are off). */
const shownIds = (events: readonly Envelope[]) => events.filter((event) => event.type !== 'llm.delta').map((event) => event.id);

describe('the inspector page across a server restart', () => {
  it('resumes where it left off, without duplicated timeline rows', async () => {
    const stage = await staged.stage({ cast: [crier] });
    await stage.scene.start();
    await stage.scene.step();
    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);
    await expect.poll(() => timelineIds(page), POLL).toEqual(shownIds(stage.events));
    await expect.poll(() => attrOf(ui.header.connection, 'data-state'), POLL).toBe('open');

    const { port, token } = stage.inspector;
    await stage.inspector.close();
    await expect.poll(() => attrOf(ui.header.connection, 'data-state'), POLL).toBe('reconnecting');
    // The scene goes on while nobody watches; the history keeps what happens.
    await stage.scene.step();
    stage.inspector = await startInspector({ scene: stage.scene, history: stage.history, gate: stage.gate, port, token, onNotice: () => {} });

    await expect.poll(() => timelineIds(page), POLL).toEqual(shownIds(stage.events));
    await expect.poll(() => attrOf(ui.header.connection, 'data-state'), POLL).toBe('open');
    await stage.scene.step();
    await expect.poll(() => timelineIds(page), POLL).toEqual(shownIds(stage.events));
    const ids = await timelineIds(page);
    expect(new Set(ids).size).toBe(ids.length);
    expect(await ui.speech('crier').count()).toBe(3);
    expect(await page.locator('#missed').isHidden()).toBe(true);
    expect(view.errors).toEqual([]);
  }, 60_000);

  it('shows that events were missed when the restarted server lost the history', async () => {
    const stage = await staged.stage({ cast: [crier] });
    await stage.scene.start();
    await stage.scene.step();
    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);
    await expect.poll(() => timelineIds(page), POLL).toEqual(shownIds(stage.events));

    const { port, token } = stage.inspector;
    await stage.inspector.close();
    await expect.poll(() => attrOf(ui.header.connection, 'data-state'), POLL).toBe('reconnecting');
    const downFrom = stage.events.length;
    await stage.scene.step();
    const downTo = stage.events.length;
    // A new history: what tick 2 published is gone.
    stage.history = createEventHistory(stage.scene.bus);
    stage.inspector = await startInspector({ scene: stage.scene, history: stage.history, port, token, onNotice: () => {} });
    await stage.scene.step();

    await page.locator('#missed').waitFor({ state: 'visible' });
    const ids = await timelineIds(page);
    expect(new Set(ids).size).toBe(ids.length);
    await expect.poll(() => timelineIds(page), POLL).toEqual(shownIds([...stage.events.slice(0, downFrom), ...stage.events.slice(downTo)]));
    expect(view.errors).toEqual([]);
  }, 60_000);
});

