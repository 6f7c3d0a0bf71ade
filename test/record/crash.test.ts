import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { readLog } from '../../src/record/read-log.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { kill, startWriter, tempDir } from './helpers.js';

// A writer SIGKILLed mid-append leaves a torn last line; readers quarantine it and
// go on, nothing written before the kill is lost, and the log stays appendable.
describe('session log: SIGKILL mid-append', () => {
  let cleanup = (): void => {};
  afterEach(() => cleanup());

  it('quarantines the torn last line, keeps every earlier event, and appends on a fresh line', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const path = join(temp.dir, 'session.jsonl');
    // the fixture writes half of its sixth line, says "tearing", and waits: the kill lands mid-line
    const { child } = await startWriter(path, 'torn', /^tearing$/);
    await kill(child);

    const raw = readFileSync(path, 'utf8');
    expect(raw.endsWith('\n')).toBe(false);
    const before = readLog(path);
    expect(before.events.filter((event) => event.type === 'agent.said').map((event) => (event.data as { text: string }).text)).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    expect(before.quarantined).toHaveLength(1);
    expect(before.quarantined[0]).toMatchObject({ lineNumber: 8, reason: expect.stringMatching(/^not JSON: .*the last line has no end of line/) });
    expect(before.quarantined[0]?.text).toMatch(/^{"v":1,.*TEAR-HERE/);

    // reopen: the stale lock of the dead writer is taken over, the tail is closed, appends go on
    const log = createSessionLog(path, { mode: 'append' });
    const bus = createBus();
    log.attach(bus);
    bus.publish('agent.said', { text: 'after the crash' });
    await log.close();
    const after = readLog(path);
    expect(after.quarantined.map((line) => line.lineNumber)).toEqual([8]);
    expect(after.quarantined[0]?.reason).not.toMatch(/last line/);
    expect(after.events.map((event) => event.type)).toEqual(['log.opened', ...Array(5).fill('agent.said'), 'log.error', 'agent.said']);
    expect(after.events.at(-1)?.data).toEqual({ text: 'after the crash' });
  });

  it('loses nothing the writer reported before a kill at an arbitrary moment', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const path = join(temp.dir, 'loop.jsonl');
    const { child, lines } = await startWriter(path, 'loop', /^written 50$/);
    await kill(child); // mid-loop: wherever the writer happens to be
    const reported = Number(lines.at(-1)?.split(' ')[1]);
    expect(reported).toBeGreaterThanOrEqual(50);

    const { events: all, quarantined } = readLog(path);
    const events = all.filter((event) => event.type !== 'log.opened');
    // every event the child reported was on disk; at most the one being written is torn
    expect(events.length).toBeGreaterThanOrEqual(reported);
    expect(events.map((event) => (event.data as { callId: string }).callId).slice(0, reported)).toEqual(
      Array.from({ length: reported }, (_, index) => `c${index + 1}`),
    );
    expect(quarantined.length).toBeLessThanOrEqual(1);
    const log = createSessionLog(path, { mode: 'append' });
    await log.close();
    expect(() => readLog(path)).not.toThrow();
  });
});
