import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { useBrowser } from './browser.js';

/**
 * The example page of docs/streaming.md (docs/examples/stream-page/): its server script runs as a
 * user would run it (`troupe` resolved to the sources, no build), and Chromium shows the agent's
 * answer arriving over Server-Sent Events, with its tool call and result.
 */

const root = new URL('../../', import.meta.url);
const example = new URL('docs/examples/stream-page/server.ts', root);

/** Resolves `troupe` and `troupe/<subpath>` through package.json `exports` to the sources. */
const TROUPE_FROM_SOURCE = `
import { readFileSync } from 'node:fs';
const root = ${JSON.stringify(root.href)};
const { exports } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
export async function resolve(specifier, context, next) {
  if (specifier !== 'troupe' && !specifier.startsWith('troupe/')) return next(specifier, context);
  const entry = exports[specifier === 'troupe' ? '.' : './' + specifier.slice('troupe/'.length)];
  if (entry === undefined) return next(specifier, context);
  return next(new URL(entry.import.replace(/^\\.\\/dist\\//, './').replace(/\\.js$/, '.ts'), root).href, context);
}`;

const RUN_EXAMPLE = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(TROUPE_FROM_SOURCE)}));
await import(${JSON.stringify(example.href)});
`;

let child: ChildProcess | undefined;
afterAll(() => {
  if (child?.pid !== undefined && child.exitCode === null) child.kill();
});

/** Starts the example server on a free port; resolves with its URL once it listens. */
function startServer(): Promise<string> {
  child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RUN_EXAMPLE], {
    cwd: new URL('.', root).pathname,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child!.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match !== null) resolve(match[1]!);
    });
    child!.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child!.on('exit', (code) => reject(new Error(`the example server exited (${String(code)}): ${err}`)));
  });
}

const browser = useBrowser();

describe('the streaming example page', () => {
  it('is the code block docs/streaming.md shows', () => {
    const page = readFileSync(new URL('docs/streaming.md', root), 'utf8');
    expect(page).toContain(`\`\`\`ts typecheck\n${readFileSync(example, 'utf8')}\`\`\``);
  });

  it('shows the streamed answer and the tool call in Chromium', async () => {
    const [url, chromium] = await Promise.all([startServer(), browser()]);
    const context = await chromium.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const streams: string[] = [];
    page.on('response', (response) => void (response.url().includes('/chat') && streams.push(response.headers()['content-type'] ?? '')));
    await page.goto(url);
    await page.fill('#question', 'Who is player 9?');
    await page.click('button[type=submit]');

    await expect.poll(() => page.textContent('#status'), { timeout: 15_000 }).toBe('done');
    expect(await page.textContent('#answer')).toBe('Let me look up player 9.\nPlayer 9 is Bo, on the blue team.');
    expect(await page.textContent('#calls')).toBe('lookup_player({"id":"9"}) → {"name":"Bo","team":"blue"}');
    expect(streams).toEqual(['text/event-stream; charset=utf-8']);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
