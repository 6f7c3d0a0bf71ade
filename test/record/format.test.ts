import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { CATALOGUE_VERSION } from '../../src/bus/events.js';
import { sequentialIds } from '../../src/bus/ids.js';
import { LogError } from '../../src/errors.js';
import { LOG_VERSION } from '../../src/record/log-format.js';
import { readLog } from '../../src/record/read-log.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { tempDir } from './helpers.js';

const header = (fields: Record<string, unknown>) =>
  `${JSON.stringify({ format: 'troupe-log', version: LOG_VERSION, catalogue: CATALOGUE_VERSION, createdAt: '2025-01-01T00:00:00.000Z', ...fields })}\n`;

// A log from another version, or with a truncated header, fails with a clear
// error naming the version; a damaged line elsewhere is quarantined, never fatal.
describe('session log: header and version', () => {
  let dir = '';
  let cleanup = (): void => {};
  afterEach(() => cleanup());
  const file = (name: string, content: string): string => {
    ({ dir, cleanup } = tempDir());
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it.each([
    ['a newer version', header({ version: 3 }), /format version 3; this troupe reads versions 1 and 2/],
    ['an older version', header({ version: 0 }), /format version 0; this troupe reads versions 1 and 2/],
    ['no version', header({ version: undefined }), /format version missing/],
    ['another catalogue', header({ catalogue: 99 }), /event catalogue version 99; this troupe knows version 1/],
    ['another format', header({ format: 'langgraph-checkpoint' }), /not a troupe session log \(format "langgraph-checkpoint"/],
    ['a truncated header', '{"format":"troupe-log","version":3,"catal', /truncated header .* version 3/],
    ['a truncated header without a version', '{"format":"troupe-', /truncated header .* version unknown/],
    ['an empty file', '', /empty: no header, version unknown/],
  ])('readLog refuses %s', (_label, content, message) => {
    const path = file('log.jsonl', content);
    expect(() => readLog(path)).toThrow(LogError);
    expect(() => readLog(path)).toThrow(message);
  });

  it('createSessionLog refuses to append to a log of another version, and releases its lock', () => {
    const path = file('new.jsonl', `${header({ version: 3 })}{"v":1,"id":"a","type":"agent.said","at":1,"data":{"text":"x"}}\n`);
    expect(() => createSessionLog(path, { mode: 'append' })).toThrow(/format version 3/);
    expect(() => createSessionLog(path, { mode: 'append' })).toThrow(/format version 3/); // not "already open"
  });

  it('quarantines damaged lines anywhere with their line numbers and reasons', () => {
    const good = (id: string) => JSON.stringify({ v: CATALOGUE_VERSION, id, type: 'agent.said', at: 1, data: { text: id } });
    // A version 1 log: lines without checksums.
    const path = file(
      'damaged.jsonl',
      [header({ version: 1 }).trimEnd(), good('a'), 'garbage', '[1,2]', '{"v":1,"id":"x"}', JSON.stringify({ v: 7, id: 'b', type: 'agent.said', at: 1, data: {} }), good('c'), ''].join('\n'),
    );
    const { header: read, events, quarantined } = readLog(path);
    expect(read).toMatchObject({ format: 'troupe-log', version: 1 });
    expect(events.map((event) => event.id)).toEqual(['a', 'c']);
    expect(events[0]).not.toHaveProperty('v');
    expect(quarantined.map((line) => [line.lineNumber, line.reason.split(':')[0]])).toEqual([
      [3, 'not JSON'],
      [4, 'not an envelope object'],
      [5, 'not an envelope'],
      [6, 'event catalogue version 7 differs from the header\'s 1'],
    ]);
  });

  it('names each line a hand edited, inserted or deleted, in a version 2 log, and reads on', async () => {
    const path = file('chained.jsonl', '');
    const log = createSessionLog(path);
    const bus = createBus({ ids: sequentialIds('e') });
    log.attach(bus);
    for (const text of ['one', 'two', 'three', 'four', 'five']) bus.publish('agent.said', { text });
    await log.close();
    const clean = readLog(path);
    expect(clean.header.version).toBe(2);
    expect(clean.tampered).toEqual([]);
    expect(clean.events.slice(1).map((event) => (event.data as { text: string }).text)).toEqual(['one', 'two', 'three', 'four', 'five']);
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[3] = lines[3]!.replace('"two"', '"TWO"'); // edited (line 1 is the header, 2 the run's log.opened)
    lines.splice(5, 1); // "four" deleted
    writeFileSync(path, lines.join('\n'));
    const { events, tampered } = readLog(path);
    expect(events.slice(1).map((event) => (event.data as { text: string }).text)).toEqual(['one', 'TWO', 'three', 'five']);
    expect(tampered.map((line) => line.lineNumber)).toEqual([4, 6]);
    expect(tampered[0]?.reason).toMatch(/checksum mismatch/);
  });

  it('refuses a path that is not a regular file at once: a device, a directory, a FIFO', () => {
    expect(() => readLog('/dev/zero')).toThrow(/is a device; a session log is a regular file/);
    expect(() => createSessionLog('/dev/zero')).toThrow(/is a device/);
    ({ dir, cleanup } = tempDir());
    expect(() => readLog(dir)).toThrow(/is a directory/);
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    expect(() => readLog(fifo)).toThrow(/is a FIFO/);
  });

  it('refuses to start a run in a log that holds one, naming troupe resume; appends when asked', async () => {
    const path = file('run.jsonl', '');
    const first = createSessionLog(path);
    const bus = createBus();
    first.attach(bus);
    bus.publish('agent.said', { text: 'first run' });
    await first.close();
    expect(() => createSessionLog(path)).toThrow(/already holds a run: continue it with `troupe resume/);
    const again = createSessionLog(path, { mode: 'append' });
    await again.close();
  });
});
