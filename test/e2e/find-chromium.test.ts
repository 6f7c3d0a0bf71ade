import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { findChromium } from './find-chromium.js';

describe('findChromium', () => {
  it('prefers CHROME_PATH, and says so when it names nothing', async () => {
    expect(await findChromium({ CHROME_PATH: '/nonexistent/chrome' })).toEqual({ missing: 'CHROME_PATH is /nonexistent/chrome, which does not exist' });
    expect(await findChromium({ CHROME_PATH: process.execPath })).toEqual({ path: process.execPath, source: 'CHROME_PATH' });
  });

  it('takes the first system browser listed', async () => {
    expect(await findChromium({ TROUPE_SYSTEM_CHROMIUM: `/nonexistent/chromium:${process.execPath}` })).toEqual({ path: process.execPath, source: 'system' });
  });

  it('falls back to the Chromium inside the npm package, which runs here', async () => {
    const found = await findChromium({ TROUPE_SYSTEM_CHROMIUM: '/nonexistent/chromium', PATH: '' });
    expect(found).toMatchObject({ source: 'npm' });
    if (!('path' in found)) return;
    const browser = await chromium.launch({ executablePath: found.path, env: { ...process.env, ...found.env }, args: ['--no-sandbox', '--disable-gpu'], headless: true });
    try {
      const page = await browser.newPage();
      await page.setContent('<p id="greeting">Hello from the npm Chromium</p>');
      expect(await page.textContent('#greeting')).toBe('Hello from the npm Chromium');
      expect(browser.version()).toMatch(/^\d+\./);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
