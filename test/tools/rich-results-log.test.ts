import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus, toolResult, type Envelope, type ToolResult } from '../../src/index.js';
import { isToolResult } from '../../src/tools/index.js';
import { createSessionLog, readLog } from '../../src/record/index.js';
import { scriptedProvider, sequentialIds, steppedClock, testAgent } from '../../src/testing/index.js';
import { tempDir } from '../record/helpers.js';
import { CALL_XML, jpegBytes, PNG, PNG_BASE64, PNG_SHA256, resultTool } from './rich-results-fixtures.js';

const PHOTO = jpegBytes(20_000);
const PHOTO_SHA256 = createHash('sha256').update(PHOTO).digest('hex');

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups) cleanup();
  cleanups = [];
});

/** Runs an agent whose tools return `results` in turn, logging to a fresh temp dir. */
async function loggedRun(results: (() => unknown)[]): Promise<{ path: string; dir: string }> {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const path = join(dir, 'session.jsonl');
  const tools = results.map((make, index) => resultTool(`tool_${index}`, make));
  const provider = scriptedProvider([...results.map((_, index) => CALL_XML(`tool_${index}`)), 'Done.']);
  const log = createSessionLog(path, { fsync: 'never' });
  const bus = createBus({ ids: sequentialIds(), clock: steppedClock(1_000, 1) });
  const { agent } = testAgent({ provider, tools, bus, log });
  await agent.run('go');
  await log.close();
  return { path, dir };
}

const completed = (events: Envelope[]) => events.filter((event): event is Envelope<'tool.completed'> => event.type === 'tool.completed');

describe('rich results in the session log', () => {
  it('keeps a small image inline as base64 and puts a large one in a side file named by its hash', async () => {
    const mixed = () =>
      toolResult([
        { type: 'text', text: 'two pictures' },
        { type: 'image', data: PNG, mediaType: 'image/png' },
        { type: 'image', data: PHOTO, mediaType: 'image/jpeg' },
      ]);
    const { path, dir } = await loggedRun([mixed]);

    expect(readdirSync(join(dir, 'session.jsonl.side'))).toEqual([`${PHOTO_SHA256}.jpg`]);
    expect(readFileSync(join(dir, 'session.jsonl.side', `${PHOTO_SHA256}.jpg`)).equals(Buffer.from(PHOTO))).toBe(true);
    const line = readFileSync(path, 'utf8')
      .split('\n')
      .find((text) => text.includes('"tool.completed"'))!;
    // The big image's bytes never enter the line.
    expect(line.length).toBeLessThan(2_000);

    const [event] = completed(readLog(path).events);
    expect(event!.data.output).toEqual({
      $parts: [
        { type: 'text', text: 'two pictures' },
        { type: 'image', mediaType: 'image/png', bytes: PNG.byteLength, sha256: PNG_SHA256, base64: PNG_BASE64 },
        { type: 'image', mediaType: 'image/jpeg', bytes: PHOTO.byteLength, sha256: PHOTO_SHA256, $side: `session.jsonl.side/${PHOTO_SHA256}.jpg` },
      ],
    });
    expect(event!.data.parts).toEqual([
      { type: 'text', chars: 12 },
      { type: 'image', mediaType: 'image/png', bytes: PNG.byteLength, sha256: PNG_SHA256 },
      { type: 'image', mediaType: 'image/jpeg', bytes: PHOTO.byteLength, sha256: PHOTO_SHA256 },
    ]);
  });

  it('reads a rich result back with its bytes when asked to load side files', async () => {
    const { path } = await loggedRun([() => toolResult([{ type: 'json', value: { ok: true } }, { type: 'image', data: PHOTO, mediaType: 'image/jpeg' }, { type: 'image', data: PNG, mediaType: 'image/png' }])]);
    const { events, quarantined } = readLog(path, { loadSideFiles: true });
    expect(quarantined).toEqual([]);
    const output = completed(events)[0]!.data.output;
    expect(isToolResult(output)).toBe(true);
    const parts = (output as ToolResult).parts;
    expect(parts[0]).toEqual({ type: 'json', value: { ok: true } });
    expect(parts[1]).toMatchObject({ type: 'image', mediaType: 'image/jpeg', sha256: PHOTO_SHA256 });
    expect(Buffer.from((parts[1] as { data: Uint8Array }).data).equals(Buffer.from(PHOTO))).toBe(true);
    expect(Buffer.from((parts[2] as { data: Uint8Array }).data).equals(Buffer.from(PNG))).toBe(true);
  });

  it('stores the same image once, however many results carry it', async () => {
    const photo = () => toolResult.image(PHOTO, 'image/jpeg');
    const { path, dir } = await loggedRun([photo, photo]);
    expect(readdirSync(join(dir, 'session.jsonl.side'))).toEqual([`${PHOTO_SHA256}.jpg`]);
    const outputs = completed(readLog(path, { loadSideFiles: true }).events).map((event) => event.data.output);
    expect(outputs.every(isToolResult)).toBe(true);
  });

  it('quarantines a damaged side file or a reference outside the log, and keeps the event as logged', async () => {
    const { path, dir } = await loggedRun([() => toolResult.image(PHOTO, 'image/jpeg')]);
    writeFileSync(join(dir, 'session.jsonl.side', `${PHOTO_SHA256}.jpg`), Buffer.from(jpegBytes(100)));
    let read = readLog(path, { loadSideFiles: true });
    expect(read.quarantined).toHaveLength(1);
    expect(read.quarantined[0]!.reason).toContain('image part 1: bytes do not match their sha256');
    expect(isToolResult(completed(read.events)[0]!.data.output)).toBe(false);

    const text = readFileSync(path, 'utf8').replace(`session.jsonl.side/${PHOTO_SHA256}.jpg`, '../../etc/passwd.jpg');
    writeFileSync(path, text);
    read = readLog(path, { loadSideFiles: true });
    expect(read.quarantined[0]!.reason).toContain('refused: not a side file of this log');
  });
});

describe('rich results on the inspector page', () => {
  it('shows text, JSON and an image placeholder, from the bus form and the log form alike', async () => {
    // The page is plain checked JavaScript without declarations: import it by URL.
    const page = new URL('../../src/inspect/page/format.js', import.meta.url).href;
    const { resultText } = (await import(page)) as { resultText: (output: unknown) => unknown };
    const bus = { parts: [{ type: 'text', text: 'chart' }, { type: 'image', mediaType: 'image/png', bytes: 12_595, sha256: 'ab' }, { type: 'json', value: { a: 1 } }] };
    expect(resultText(bus)).toBe('chart [image: image/png, 12.3 KB] {"a":1}');
    const logged = { $parts: [{ type: 'image', mediaType: 'image/jpeg', bytes: 20_000, base64: 'AAAA' }] };
    expect(resultText(logged)).toBe('[image: image/jpeg, 19.5 KB]');
    // Hostile shapes never break it.
    expect(resultText({ parts: [null, 7, { type: 'image' }] })).toBe('[unknown part] [unknown part] [image: undefined, ? bytes]');
    expect(resultText('plain')).toBe('plain');
  });
});
