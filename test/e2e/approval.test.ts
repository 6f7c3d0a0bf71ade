import { describe, expect, it } from 'vitest';
import { defineTool, scriptedProvider } from '../../src/index.js';
import { attrOf, parts, textOf } from './page-parts.js';
import { useStagedPages } from './stage.js';

/**
 * Approvals from the page: a call of a `needsApproval` tool waits in the approvals panel; Approve
 * runs it (once), Deny turns it into a `denied` rejection with the reason typed on the page.
 */

const POLL = { timeout: 15_000 };
const staged = useStagedPages();

/** A steward whose cellar door needs a human's yes; `opened` counts real executions. */
function steward() {
  const counter = { opened: 0 };
  const openCellar = defineTool({
    name: 'open_cellar',
    description: 'Open the cellar door.',
    needsApproval: true,
    parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'], additionalProperties: false },
    execute: ({ reason }) => {
      counter.opened++;
      return `cellar open (${String(reason)})`;
    },
  });
  const provider = scriptedProvider(['The stew runs low.\n<ACTION><open_cellar><reason>more stew</reason></open_cellar></ACTION>']);
  return { counter, provider, member: { name: 'steward', provider, tools: [openCellar], triggers: ['start' as const] } };
}

describe('approvals on the inspector page', () => {
  it('shows a pending approval and runs the call once when Approve is pressed', async () => {
    const { counter, provider, member } = steward();
    const stage = await staged.stage({ cast: [member] });
    const running = stage.run(1);
    const requested = await stage.next('tool.approval.requested');
    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);

    const card = ui.approval('steward', requested.data.callId);
    await card.waitFor();
    expect(await card.locator('.tool-name').textContent()).toBe('open_cellar');
    expect(JSON.parse((await card.locator('.approval-args').textContent()) ?? '')).toEqual({ reason: 'more stew' });
    await expect.poll(() => attrOf(ui.agentCard('steward'), 'data-state'), POLL).toBe('awaitingApproval');
    expect(await attrOf(ui.call('steward', 'open_cellar'), 'data-status')).toBe('awaiting');
    expect(counter.opened).toBe(0);

    await card.locator('button.approve').click();
    const completed = await stage.next('tool.completed', (event) => event.data.callId === requested.data.callId);
    expect(completed.data.output).toBe('cellar open (more stew)');
    await running;
    expect(counter.opened).toBe(1);
    const resolved = stage.events.filter((event) => event.type === 'tool.approval.resolved');
    expect(resolved.map((event) => (event as { data: { approved: boolean } }).data.approved)).toEqual([true]);

    // The request leaves the panel once the bus says it was resolved; the call shows its result.
    await expect.poll(() => page.locator('#approvals .approval').count(), POLL).toBe(0);
    expect(await page.locator('#approvals-panel').isHidden()).toBe(true);
    await expect.poll(() => attrOf(ui.call('steward', 'open_cellar'), 'data-status'), POLL).toBe('completed');
    expect(await textOf(ui.call('steward', 'open_cellar').locator('.outcome-approved'))).toBe('✓ approved');
    provider.assertConsumed();
    expect(view.errors).toEqual([]);
  }, 60_000);

  it('denies with the reason typed on the page: nothing runs', async () => {
    const { counter, member } = steward();
    const stage = await staged.stage({ cast: [member] });
    const running = stage.run(1);
    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);

    const card = ui.approval('steward');
    await card.waitFor();
    await card.locator('input.deny-reason').fill('not before closing time');
    await card.locator('button.deny').click();
    const rejected = await stage.next('tool.rejected');
    expect(rejected.data.code).toBe('denied');
    await running;
    expect(counter.opened).toBe(0);
    expect(stage.events.some((event) => event.type === 'tool.started')).toBe(false);

    const call = ui.call('steward', 'open_cellar');
    await expect.poll(() => attrOf(call, 'data-status'), POLL).toBe('rejected');
    expect(await textOf(call.locator('.outcome-denied'))).toBe('✗ denied: not before closing time');
    await expect.poll(() => page.locator('#approvals .approval').count(), POLL).toBe(0);
    expect(view.errors).toEqual([]);
  }, 60_000);

  it('says why when the server refuses an answer, and lets the reader try again', async () => {
    const { counter, member } = steward();
    const stage = await staged.stage({ cast: [member] });
    const running = stage.run(1);
    const view = await staged.page(stage);
    const { page } = view;
    const card = parts(page).approval('steward');
    await card.waitFor();

    // The server's refusal, whatever its cause (a stale request, a read-only inspector).
    await page.route('**/control', (route) => route.fulfill({ status: 409, contentType: 'application/json', body: '{"error":"no such pending call"}' }));
    await card.locator('button.approve').click();
    await expect.poll(() => textOf(card.locator('.approval-error')), POLL).toBe('no such pending call');
    expect(await card.locator('button.approve').isEnabled()).toBe(true);
    expect(counter.opened).toBe(0);

    await page.unroute('**/control');
    await card.locator('button.approve').click();
    await running;
    expect(counter.opened).toBe(1);
    await expect.poll(() => card.count(), POLL).toBe(0);
    expect(view.errors).toEqual([]);
  }, 60_000);
});
