import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';
import { afterAll } from 'vitest';
import { findChromium } from './find-chromium.js';

/**
 * Headless Chromium for the inspector's browser tests, driven by playwright-core (which never
 * downloads a browser of its own): `CHROME_PATH`, else the system's Chromium or Chrome, else the
 * one the `@sparticuz/chromium` devDependency ships (see `find-chromium.ts`). A missing browser
 * fails the suite with a message that says what was tried: these tests are never skipped.
 */

// Without the background-networking flags Chromium phones home at start, and this machine's
// closed network refuses it many times over (docs: .library/env/machines/node.md). Playwright
// adds --headless and a fresh temporary --user-data-dir itself.
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches Chromium, or throws an error that names the path tried and how to install it.
 * `args` adds flags (e.g. `--host-resolver-rules` to give 127.0.0.1 a foreign name).
 */
export async function launchBrowser(options: { args?: readonly string[] } = {}): Promise<Browser> {
  const found = await findChromium();
  if ('missing' in found) {
    throw new Error(`e2e: ${found.missing}. Run npm install (it brings @sparticuz/chromium), install a Chromium, or set CHROME_PATH to a Chromium or Chrome binary.`);
  }
  return chromium.launch({
    executablePath: found.path,
    args: [...FLAGS, ...(options.args ?? [])],
    headless: true,
    ...(found.env === undefined ? {} : { env: { ...process.env, ...found.env } }),
  });
}

/**
 * One browser for a test file: launched by the first test that asks (so a missing Chromium fails
 * each test with the message above, rather than leaving them skipped), closed after the file.
 */
export function useBrowser(options: { args?: readonly string[] } = {}): () => Promise<Browser> {
  let launching: Promise<Browser> | undefined;
  afterAll(async () => {
    const browser = await launching?.catch(() => undefined);
    await browser?.close();
  });
  return () => (launching ??= launchBrowser(options));
}

/** A page with what it did recorded: script errors, and every request it made. */
export type WatchedPage = {
  page: Page;
  context: BrowserContext;
  /** Uncaught exceptions of the page's scripts. */
  errors: string[];
  /** `console.error` lines (a refused connection while a server restarts shows up here). */
  consoleErrors: string[];
  /** Every URL the page requested, in order. */
  requests: string[];
  close(): Promise<void>;
};

/**
 * Opens `url` in a fresh context (its own cookies) and waits for the inspector page to have loaded
 * the scene: its header names it once `/state` has answered.
 */
export async function openInspector(browser: Browser, url: string, options: { width?: number; height?: number } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1440, height: options.height ?? 900 } });
  const page = await context.newPage();
  // Well under a test's own timeout, so a missing element fails with its name, not a bare timeout.
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('request', (request: Request) => void requests.push(request.url()));
  await page.goto(url);
  await page.locator('body.page-live, body.page-log').waitFor();
  return { page, context, errors, consoleErrors, requests, close: () => context.close() };
}
