import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, scriptedProvider } from '../../src/index.js';
import { openInspector, useBrowser, type WatchedPage } from './browser.js';
import { parts } from './page-parts.js';
import { startStage, type Stage } from './stage.js';

/**
 * Who gets in, seen from a real browser (the inspector's security model; test/inspect/security.test.ts checks
 * each rule with plain requests). The page without its token, or under another host name that
 * resolves to 127.0.0.1 (DNS rebinding), is refused. Another site on this machine, in the same
 * browser that holds the token cookie, can neither approve a call, nor read the state, nor
 * stream the events.
 */

const REBIND_NAME = 'rebind.test';
// The browser resolves a foreign name to loopback, as a rebinding DNS server would make it.
const browser = useBrowser({ args: [`--host-resolver-rules=MAP ${REBIND_NAME} 127.0.0.1`] });
let stage: Stage | undefined;
let view: WatchedPage | undefined;
let elsewhere: Server;
let elsewhereUrl = '';

beforeAll(async () => {
  elsewhere = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>another site</title><p>hello</p>');
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`;
}, 60_000);
afterAll(async () => {
  if (elsewhere !== undefined) await new Promise((resolve) => elsewhere.close(resolve));
});
afterEach(async () => {
  await view?.close();
  await stage?.close();
  view = undefined;
  stage = undefined;
});

/** A steward waiting for approval of a call that counts its executions. */
function steward() {
  const counter = { opened: 0 };
  const openCellar = defineTool({
    name: 'open_cellar',
    description: 'Open the cellar door.',
    needsApproval: true,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => {
      counter.opened++;
      return 'open';
    },
  });
  const provider = scriptedProvider(['<ACTION><open_cellar></open_cellar></ACTION>']);
  return { counter, member: { name: 'steward', provider, tools: [openCellar], triggers: ['start' as const] } };
}

describe('inspector access from a browser', () => {
  it('refuses the page without its token, and under a foreign host name even with it', async () => {
    stage = await startStage({ cast: [] });
    const { port, token } = stage.inspector;
    const context = await (await browser()).newContext();
    try {
      const page = await context.newPage();
      const bare = await page.goto(`http://127.0.0.1:${port}/`);
      expect(bare?.status()).toBe(403);
      expect(await page.textContent('body')).toContain('token required');

      const wrong = await page.goto(`http://127.0.0.1:${port}/?token=${'0'.repeat(token.length)}`);
      expect(wrong?.status()).toBe(403);

      const rebound = await page.goto(`http://${REBIND_NAME}:${port}/?token=${token}`);
      expect(rebound?.status()).toBe(403);
      expect(await page.textContent('body')).toContain('is not this inspector');
      // The rebound page's own requests (same origin for the browser) are refused too.
      const state = await page.evaluate(async () => (await fetch('/state')).status);
      expect(state).toBe(403);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('another site in the same browser can neither approve, nor read the state, nor stream events', async () => {
    const { counter, member } = steward();
    stage = await startStage({ cast: [member] });
    const running = stage.run(1);
    const requested = await stage.next('tool.approval.requested');
    // The reader's own tab: it holds the token cookie for 127.0.0.1.
    view = await openInspector(await browser(), stage.inspector.url);
    await parts(view.page).approval('steward').waitFor();
    const origin = new URL(stage.inspector.url).origin;

    const other = await view.context.newPage();
    await other.goto(elsewhereUrl);
    const attempts = await other.evaluate(
      async ({ origin, callId }) => {
        const body = JSON.stringify({ type: 'approve', agent: 'steward', callId });
        // A "simple" cross-origin POST needs no preflight: only the server's checks stop it. The
        // browser may also hide the answer (Cross-Origin-Resource-Policy); either way it was sent.
        await fetch(`${origin}/control`, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body }).catch(
          () => undefined,
        );
        const read = await fetch(`${origin}/state`, { credentials: 'include' }).then(
          () => 'read',
          () => 'blocked',
        );
        const EventSourceType = (globalThis as unknown as { EventSource: new (url: string, init: object) => { onmessage: unknown; onerror: unknown; close(): void } }).EventSource;
        const stream = await new Promise<string>((resolve) => {
          const source = new EventSourceType(`${origin}/events`, { withCredentials: true });
          source.onmessage = () => {
            source.close();
            resolve('message');
          };
          source.onerror = () => {
            source.close();
            resolve('error');
          };
        });
        return { read, stream };
      },
      { origin, callId: requested.data.callId },
    );
    expect(attempts).toEqual({ read: 'blocked', stream: 'error' });
    expect(counter.opened).toBe(0);
    expect(stage.events.some((event) => event.type === 'tool.approval.resolved')).toBe(false);

    // The reader's own page still can.
    await parts(view.page).approval('steward').locator('button.approve').click();
    await running;
    expect(counter.opened).toBe(1);
    expect(view.errors).toEqual([]);
  }, 60_000);
});
