import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, scriptedProvider } from '../../src/index.js';
import { openInspector, useBrowser, type WatchedPage } from './browser.js';
import { attrOf, parts, textOf } from './page-parts.js';
import { startStage, type Stage } from './stage.js';

/**
 * Model text with `<script>`, HTML images and markdown images reaches the page
 * in speech, streamed deltas, tool arguments and output, the world, an agent's name and the
 * timeline. It must show as text: no script runs (`window.__pwned` stays unset) and nothing is
 * fetched (a local server counting requests sees none; the page asks only its own server).
 * Bidi controls show as visible marks.
 */

const POLL = { timeout: 15_000 };
const browser = useBrowser();
let pixelServer: Server;
let pixelHits = 0;
let pixel = '';
let stage: Stage | undefined;
let view: WatchedPage | undefined;

beforeAll(async () => {
  pixelServer = createServer((_req, res) => {
    pixelHits++;
    res.writeHead(200, { 'Content-Type': 'image/png' });
    res.end();
  });
  await new Promise<void>((resolve) => pixelServer.listen(0, '127.0.0.1', resolve));
  pixel = `http://127.0.0.1:${(pixelServer.address() as AddressInfo).port}/pixel.png`;
}, 60_000);
afterAll(async () => {
  await view?.close();
  await stage?.close();
  if (pixelServer !== undefined) await new Promise((resolve) => pixelServer.close(resolve));
});

/** Everything a hostile (or just careless) model might write, in one line. */
function hostileText(): string {
  return [
    'Look <script>window.__pwned = 1</script>',
    `<img src="${pixel}?img" onerror="window.__pwned = 2">`,
    `![x](${pixel}?md)`,
    `<iframe src="${pixel}?frame"></iframe>`,
    '<a href="javascript:window.__pwned=3">click</a>',
    `<svg onload="window.__pwned=4"></svg>`,
    'txt.\u202Eexe\u202C',
  ].join(' ');
}

/** XML text escaping, as a model writing a correct block would do it. */
const xmlText = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;');

describe('model text on the inspector page', () => {
  it('is shown as text everywhere: no script runs, no request leaves for another server', async () => {
    const hostile = hostileText();
    const scribble = defineTool({
      name: 'scribble',
      description: 'Write on the wall.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      execute: ({ text }, { agent }) => {
        stage!.scene.world.set('wall', { [String(text)]: String(text) }, { agent });
        return { written: text, html: `<img src="${pixel}?output">` };
      },
    });
    const provider = scriptedProvider([`${hostile}\n<ACTION><scribble><text>${xmlText(hostile)}</text></scribble></ACTION>`], { stream: { chunkSize: 7 } });
    stage = await startStage({ cast: [{ name: 'mimic', provider, tools: [scribble], triggers: ['start'] }] });
    const origin = new URL(stage.inspector.url).origin;
    view = await openInspector(await browser(), stage.inspector.url);
    const { page } = view;
    const ui = parts(page);

    await stage.run(1);
    stage.scene.say(`<img src="${pixel}?name">`, hostile);

    // Everything arrived and was drawn.
    const call = ui.call('mimic', 'scribble');
    await expect.poll(() => attrOf(call, 'data-status'), POLL).toBe('completed');
    await expect.poll(() => page.locator('#transcript .entry.speech').count(), POLL).toBe(2);
    await expect.poll(() => page.locator('#world .w-value').count(), POLL).toBeGreaterThan(0);
    const lastEvent = stage.events.at(-1)!;
    await page.locator(`#timeline .t-row[data-id="${lastEvent.id}"]`).waitFor();
    await page.click(`#timeline .t-row[data-id="${lastEvent.id}"]`);

    // Shown as the very characters the model wrote (bidi controls as visible marks).
    const said = ui.speech('mimic').locator('.speech-text');
    const visible = hostile.replace('\u202E', 'U+202E').replace('\u202C', 'U+202C');
    expect(await said.textContent()).toBe(visible);
    expect(await said.locator('.control-char').allTextContents()).toEqual(['U+202E', 'U+202C']);
    expect(await call.locator('.args dd').textContent()).toBe(visible);
    expect(await textOf(call.locator('.outcome.result'))).toContain('<img src=');
    expect(await page.locator('#event-detail').textContent()).toContain('<script>window.__pwned = 1</script>');
    expect(await page.locator('#agents').textContent()).toContain(`<img src="${pixel}?name">`);

    // Nothing became markup: the only script is the page's own, no image, frame, link or svg.
    expect(await page.locator('body script').count()).toBe(0);
    expect(await page.locator('script').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('src')))).toEqual(['/assets/app.js']);
    expect(await page.locator('img, iframe, svg, a[href], object, embed').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();

    // No request left for the pixel server, nor anywhere but the inspector.
    expect(pixelHits).toBe(0);
    expect(view.requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    expect(view.errors).toEqual([]);
    provider.assertConsumed();
  }, 60_000);
});
