import type { Locator, Page } from 'playwright-core';

/**
 * Where things are on the inspector page, by the data attributes the page puts on them (not by
 * look): tests survive a change of style.
 */
export const parts = (page: Page) => ({
  agentCard: (agent: string): Locator => page.locator(`.agent-card[data-agent="${agent}"]`),
  agentCards: (): Locator => page.locator('.agent-card'),
  speech: (agent: string): Locator => page.locator(`#transcript .entry.speech[data-agent="${agent}"]`),
  call: (agent: string, tool: string): Locator =>
    page.locator(`#transcript .entry.call[data-agent="${agent}"]`).filter({ has: page.locator('.tool-name', { hasText: new RegExp(`^${tool}$`) }) }),
  entries: (agent: string, kind: string): Locator => page.locator(`#transcript .entry.${kind}[data-agent="${agent}"]`),
  worldLeaf: (path: string): Locator => page.locator(`#world .w-leaf[data-path="${path}"] .w-value`),
  timelineRows: (): Locator => page.locator('#timeline .t-row'),
  approval: (agent: string, callId?: string): Locator =>
    page.locator(callId === undefined ? `#approvals .approval[data-agent="${agent}"]` : `#approvals .approval[data-agent="${agent}"][data-call-id="${callId}"]`),
  header: {
    tick: page.locator('#tick'),
    runState: page.locator('#run-state'),
    connection: page.locator('#connection'),
    pause: page.locator('#pause'),
    resume: page.locator('#resume'),
    step: page.locator('#step'),
  },
});

/** The ids of the timeline's rows, in order. */
export function timelineIds(page: Page): Promise<string[]> {
  return page.locator('#timeline .t-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id') ?? ''));
}

/** The first match's text now, or null when there is none yet (for `expect.poll`, which retries). */
export function textOf(locator: Locator): Promise<string | null> {
  return locator.evaluateAll((nodes) => (nodes[0] === undefined ? null : nodes[0].textContent));
}

/** The first match's attribute now, or null when there is none yet. */
export function attrOf(locator: Locator, name: string): Promise<string | null> {
  return locator.evaluateAll((nodes, attribute) => (nodes[0] === undefined ? null : nodes[0].getAttribute(attribute)), name);
}
