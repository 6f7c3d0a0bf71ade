/**
 * Takes the inspector screenshots of docs/inspector.md: a live tavern with a call waiting for
 * approval (docs/images/inspector.png), and a session log scrubbed back in time
 * (docs/images/inspector-log.png). Not a test: run it after changing the page and look.
 *
 *   npx tsx test/e2e/screenshots.ts [out-dir]
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildTavern } from '../../scenes/tavern/index.js';
import { createSessionLog, readLog } from '../../src/record/index.js';
import { createEventHistory, startInspector } from '../../src/inspect/index.js';
import { launchBrowser, openInspector } from './browser.js';

const out = resolve(process.argv[2] ?? 'docs/images');
const VIEWPORT = { width: 1440, height: 900 };

async function live(browser: Awaited<ReturnType<typeof launchBrowser>>): Promise<void> {
  // Nobody answers the steward here: his request waits on the page, as under `troupe run tavern --inspect`.
  const scene = buildTavern({ seed: 7 });
  const history = createEventHistory(scene.bus);
  const inspector = await startInspector({ scene, history, port: 0, onNotice: () => {} });
  const requested = new Promise<string>((resolve) => scene.bus.on('tool.approval.requested', (event) => resolve(event.data.callId)));
  // The tick in which the steward asks to open the cellar waits for the approval: the screenshot is taken while it does.
  const running = scene.run({ ticks: 30 });
  const callId = await requested;
  const view = await openInspector(browser, inspector.url, VIEWPORT);
  await view.page.locator('#approvals .approval').waitFor();
  await view.page.waitForTimeout(400);
  await view.page.screenshot({ path: join(out, 'inspector.png') });
  await view.close();
  scene.agents.get('steward')!.agent.approve(callId);
  await scene.stop();
  await running;
  await inspector.close();
}

async function log(browser: Awaited<ReturnType<typeof launchBrowser>>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-shots-'));
  try {
    const path = join(dir, 'tavern.jsonl');
    const sessionLog = createSessionLog(path);
    await buildTavern({ seed: 7, log: sessionLog, cellar: 'approve' }).run({ ticks: 30 });
    await sessionLog.close();
    const { events } = readLog(path);
    const inspector = await startInspector({ events, port: 0, onNotice: () => {} });
    const view = await openInspector(browser, inspector.url, VIEWPORT);
    const { page } = view;
    await page.locator('#run-state', { hasText: 'stopped' }).waitFor();
    // Back to tick 10: pip has just fixed one of his mistakes; his transcript shows how.
    const position = events.findIndex((event) => event.type === 'scene.tick' && event.data.tick === 11);
    await page.locator('#scrub-range').fill(String(position));
    await page.locator('#scrub-label', { hasText: `event ${position.toLocaleString('en')} ` }).waitFor();
    await page.selectOption('#transcript-agent', 'pip');
    await page.locator('#scrub-range').blur();
    await page.waitForTimeout(400);
    await page.screenshot({ path: join(out, 'inspector-log.png') });
    await view.close();
    await inspector.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

mkdirSync(out, { recursive: true });
const browser = await launchBrowser();
try {
  await live(browser);
  await log(browser);
  console.log(`screenshots in ${out}`);
} finally {
  await browser.close();
}
