import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CATALOGUE_VERSION } from '../../src/bus/events.js';
import { LogError } from '../../src/errors.js';
import { LOG_VERSION } from '../../src/record/log-format.js';
import { readLog } from '../../src/record/read-log.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { tempDir } from './helpers.js';

const header = (fields: Record<string, unknown>) =>
  `${JSON.stringify({ format: 'troupe-log', version: LOG_VERSION, catalogue: CATALOGUE_VERSION, createdAt: '2025-01-01T00:00:00.000Z', ...fields })}\n`;

// RELIABILITY 6e: a log from another version, or with a truncated header, fails with a clear
// error naming the version; a damaged line elsewhere is quarantined, never fatal.
describe('session log: header and version (6e)', () => {
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
    ['a newer version', header({ version: 2 }), /format version 2; this troupe reads version 1 only/],
    ['an older version', header({ version: 0 }), /format version 0; this troupe reads version 1 only/],
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
    const path = file('old.jsonl', `${header({ version: 2 })}{"v":1,"id":"a","type":"agent.said","at":1,"data":{"text":"x"}}\n`);
    expect(() => createSessionLog(path)).toThrow(/format version 2/);
    expect(() => createSessionLog(path)).toThrow(/format version 2/); // not "already open"
  });

  it('quarantines damaged lines anywhere with their line numbers and reasons', () => {
    const good = (id: string) => JSON.stringify({ v: CATALOGUE_VERSION, id, type: 'agent.said', at: 1, data: { text: id } });
    const path = file(
      'damaged.jsonl',
      [header({}).trimEnd(), good('a'), 'garbage', '[1,2]', '{"v":1,"id":"x"}', JSON.stringify({ v: 7, id: 'b', type: 'agent.said', at: 1, data: {} }), good('c'), ''].join('\n'),
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
});
