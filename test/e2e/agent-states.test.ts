import { describe, expect, it } from 'vitest';
import { scriptedProvider } from '../../src/index.js';
import { deferred } from '../../src/testing/index.js';
import { attrOf, parts, textOf } from './page-parts.js';
import { useStagedPages } from './stage.js';

/**
 * An agent card shows the machine state the agent is in now, not only where it ended: a model
 * still thinking is `deliberating`, an agent whose model failed for good is `failed`, with the
 * model's error in the transcript.
 */

const POLL = { timeout: 15_000 };
const staged = useStagedPages();

describe('agent states on the inspector page', () => {
  it('shows a thinking agent as deliberating, then done; a failed model as failed, with its error', async () => {
    const answer = deferred<string>();
    const thinker = scriptedProvider(async () => ({ text: await answer.promise }));
    const broken = scriptedProvider([{ error: { kind: 'auth', message: 'the key was revoked', retryable: false } }]);
    const stage = await staged.stage({
      cast: [
        { name: 'sage', provider: thinker, triggers: ['start'] },
        { name: 'clerk', provider: broken, triggers: ['start'] },
      ],
    });
    const running = stage.run(1);
    await stage.next('llm.request', (event) => event.agent === 'sage');
    const view = await staged.page(stage);
    const ui = parts(view.page);

    await expect.poll(() => attrOf(ui.agentCard('sage'), 'data-state'), POLL).toBe('deliberating');
    expect(await textOf(ui.agentCard('sage').locator('.state-pill'))).toBe('deliberating');
    await expect.poll(() => attrOf(ui.agentCard('clerk'), 'data-state'), POLL).toBe('failed');
    expect(await textOf(ui.agentCard('clerk').locator('.state-pill'))).toBe('failed');
    const note = ui.entries('clerk', 'note').filter({ hasText: 'the key was revoked' });
    await note.first().waitFor();
    expect(await note.first().getAttribute('class')).toContain('tone-error');

    answer.resolve('Patience is a virtue.');
    await running;
    await expect.poll(() => attrOf(ui.agentCard('sage'), 'data-state'), POLL).toBe('done');
    expect(await textOf(ui.speech('sage').first().locator('.speech-text'))).toBe('Patience is a virtue.');
    expect(view.errors).toEqual([]);
  });

  it('shows a long run as running when its history no longer holds scene.started, and stopped once it ends', async () => {
    const crier = { name: 'crier', brain: ({ tick }: { tick: number }) => `Hear ye! It is tick ${tick}.`, triggers: [{ every: 1 }] };
    const stage = await staged.stage({ cast: [crier], historySize: 20 });
    await stage.scene.start();
    for (let tick = 0; tick < 5; tick++) await stage.scene.step();
    expect(stage.history.events().some((event) => event.type === 'scene.started')).toBe(false);
    const view = await staged.page(stage);
    const ui = parts(view.page);
    await ui.speech('crier').last().waitFor();
    expect(await textOf(ui.header.runState)).toBe('running');
    expect(await ui.header.pause.isVisible()).toBe(true);

    await stage.scene.stop();
    await expect.poll(() => textOf(ui.header.runState), POLL).toBe('stopped · stopped');
    expect(await ui.header.pause.isVisible()).toBe(false);
    expect(view.errors).toEqual([]);
  });
});
