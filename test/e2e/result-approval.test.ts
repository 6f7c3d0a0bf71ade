import { describe, expect, it } from 'vitest';
import { defineTool, scriptedProvider } from '../../src/index.js';
import { attrOf, parts, textOf } from './page-parts.js';
import { useStagedPages } from './stage.js';

/**
 * Result approvals from the page: a `needsResultApproval` tool runs, its output waits in the
 * approvals panel as text; Approve lets the model see it, Reject withholds it with the reason.
 */

const POLL = { timeout: 15_000 };
const staged = useStagedPages();

/** A clerk reading a ledger whose lines may hold what the model should not see. */
function clerk() {
  const readLedger = defineTool({
    name: 'read_ledger',
    description: 'Read the ledger.',
    needsResultApproval: true,
    parameters: { type: 'object', properties: {} },
    execute: () => '<b>vault</b> code: 1234',
  });
  const provider = scriptedProvider(['<ACTION><read_ledger/></ACTION>', 'Noted.']);
  return { provider, member: { name: 'clerk', provider, tools: [readLedger], triggers: ['start' as const], rounds: 2 } };
}

describe('result approvals on the inspector page', () => {
  it('shows the held output as text, and Reject withholds it with the reason typed', async () => {
    const { provider, member } = clerk();
    const stage = await staged.stage({ cast: [member] });
    const running = stage.run(1);
    const requested = await stage.next('tool.result.approval.requested');
    const view = await staged.page(stage);
    const { page } = view;
    const ui = parts(page);

    const card = ui.approval('clerk', requested.data.callId);
    await card.waitFor();
    expect(await attrOf(card, 'data-kind')).toBe('result');
    expect(await card.locator('.tool-name').textContent()).toBe('read_ledger');
    // Shown as text, never as markup.
    expect(await textOf(card.locator('.approval-output'))).toBe('<b>vault</b> code: 1234');
    expect(await card.locator('.approval-output b').count()).toBe(0);
    expect(await textOf(card.locator('button.deny'))).toBe('Reject');
    await expect.poll(() => attrOf(ui.agentCard('clerk'), 'data-state'), POLL).toBe('awaitingResultApproval');

    await card.locator('input.deny-reason').fill('the code is secret');
    await card.locator('button.deny').click();
    const resolved = await stage.next('tool.result.approval.resolved');
    expect(resolved.data).toMatchObject({ approved: false, reason: 'the code is secret' });
    await running;
    await expect.poll(() => page.locator('#approvals .approval').count(), POLL).toBe(0);
    // The transcript's call card says the result was withheld, and why.
    const call = ui.call('clerk', 'read_ledger');
    await expect.poll(() => textOf(call.locator('.outcome-denied')), POLL).toBe('✗ result withheld from the model: the code is secret');
    const seen = provider.requests.at(-1)!.messages.at(-1)!.content;
    expect(seen).toMatch(/RESULT_REJECTED: the code is secret/);
    expect(seen).not.toMatch(/1234/);
    expect(view.errors).toEqual([]);
  }, 60_000);

  it('Approve lets the model see the result', async () => {
    const { provider, member } = clerk();
    const stage = await staged.stage({ cast: [member] });
    const running = stage.run(1);
    const view = await staged.page(stage);
    const card = parts(view.page).approval('clerk');
    await card.waitFor();
    await card.locator('button.approve').click();
    const resolved = await stage.next('tool.result.approval.resolved');
    expect(resolved.data.approved).toBe(true);
    await running;
    expect(provider.requests.at(-1)!.messages.at(-1)!.content).toMatch(/1234/);
    await expect.poll(() => card.count(), POLL).toBe(0);
    expect(view.errors).toEqual([]);
  }, 60_000);
});
