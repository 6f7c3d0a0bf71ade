import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogError } from '../../src/errors.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { kill, startWriter, tempDir } from './helpers.js';

// One writer per log: a second open, in this process or another, refuses.
describe('session log: locking', () => {
  let cleanup = (): void => {};
  afterEach(() => cleanup());
  const path = (): string => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    return join(temp.dir, 'session.jsonl');
  };

  it('refuses a second open in the same process, and allows it after close', async () => {
    const file = path();
    const first = createSessionLog(file);
    expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(process.pid));
    expect(() => createSessionLog(file)).toThrow(LogError);
    expect(() => createSessionLog(file)).toThrow(`already open by this process (pid ${process.pid})`);
    await first.close();
    const second = createSessionLog(file, { mode: 'append' }); // it holds a run now: continued, not started again
    await second.close();
  });

  it('refuses while another process holds the log, and takes over once that process is killed', async () => {
    const file = path();
    const { child, match } = await startWriter(file, 'hold', /^ready (\d+)$/);
    try {
      expect(() => createSessionLog(file)).toThrow(`already open by pid ${match[1]}`);
    } finally {
      await kill(child);
    }
    const log = createSessionLog(file, { mode: 'append' }); // the dead writer's lock is stale
    expect(readFileSync(`${file}.lock`, 'utf8').trim()).toBe(String(process.pid));
    await log.close();
  });

  it('takes over a lock whose pid is dead or whose content is old garbage', async () => {
    const file = path();
    writeFileSync(`${file}.lock`, '999999999\n');
    await createSessionLog(file).close();
    writeFileSync(`${file}.lock`, '');
    // an empty lock file is fresh (a writer between create and write), so it still refuses
    expect(() => createSessionLog(file)).toThrow(/a process that is starting/);
  });
});
