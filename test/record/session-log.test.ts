import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { CATALOGUE_VERSION } from '../../src/bus/events.js';
import { sequentialIds, steppedClock } from '../../src/bus/ids.js';
import { readLog } from '../../src/record/read-log.js';
import { createSessionLog, type SessionLogOptions } from '../../src/record/session-log.js';
import { logFs } from '../../src/record/log-fs.js';
import { tempDir } from './helpers.js';

describe('session log: writing', () => {
  let cleanup = (): void => {};
  afterEach(() => cleanup());
  const open = (options: SessionLogOptions = {}) => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const log = createSessionLog(join(temp.dir, 'nested', 'session.jsonl'), options);
    const bus = createBus({ ids: sequentialIds('e'), clock: steppedClock(1_000) });
    log.attach(bus);
    return { log, bus, dir: temp.dir };
  };

  it('writes a header, then one envelope per line with v, readable back', async () => {
    const { log, bus } = open();
    const said = bus.publish('agent.said', { text: 'hello' }, { agent: 'ana', scene: 'tavern' });
    bus.publish('tool.started', { callId: 'c1', name: 'lookup', args: { id: 7 }, attempt: 1 });
    await log.close();
    const lines = readFileSync(log.path, 'utf8').split('\n');
    expect(JSON.parse(lines[0] ?? '')).toEqual({ format: 'troupe-log', version: 2, catalogue: CATALOGUE_VERSION, createdAt: expect.any(String) });
    // The run's own line comes first: its id, and (for a scene run by troupe) how to build it again.
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ v: CATALOGUE_VERSION, type: 'log.opened', data: { run: log.run, kind: 'run' } });
    expect(log.run).toMatch(/^r[0-9a-f]{8}$/);
    expect(JSON.parse(lines[2] ?? '')).toEqual({ v: CATALOGUE_VERSION, ...said, c: expect.stringMatching(/^[0-9a-f]{8}$/) });
    expect(lines[4]).toBe('');
    const { events, quarantined } = readLog(log.path);
    expect(quarantined).toEqual([]);
    expect(events).toEqual([expect.objectContaining({ type: 'log.opened' }), said, expect.objectContaining({ type: 'tool.started', data: { callId: 'c1', name: 'lookup', args: { id: 7 }, attempt: 1 } })]);
  });

  it('group commit: a burst of events is one write, and its tool.started share one fsync (none with "never")', async () => {
    const count = async (fsync?: SessionLogOptions['fsync']) => {
      let syncs = 0;
      let writes = 0;
      const real = logFs();
      const { log, bus } = open({
        fsync,
        fs: { fdatasyncSync: (fd) => void (syncs++, real.fdatasyncSync(fd)), writeSync: (...args) => (writes++, real.writeSync(...args)) },
      });
      syncs = 0; // the header's own fsync and write are not counted
      writes = 0;
      const burst = (tag: string) => {
        bus.publish('agent.said', { text: tag });
        for (const n of [1, 2, 3]) {
          const started = bus.publish('tool.started', { callId: `${tag}${n}`, name: 't', args: {}, attempt: 1 });
          void log.assertRecorded(started);
        }
      };
      burst('a');
      await new Promise((resolve) => setImmediate(resolve)); // the event loop's next turn: the burst's lines are written
      burst('b');
      await log.assertRecorded(bus.publish('tool.started', { callId: 'last', name: 't', args: {}, attempt: 1 }));
      const during = { syncs, writes };
      await log.close();
      cleanup();
      return during;
    };
    expect(await count()).toEqual({ syncs: 2, writes: 2 });
    expect(await count('always')).toEqual({ syncs: 2, writes: 2 });
    expect(await count('never')).toEqual({ syncs: 0, writes: 2 });
  });

  it('lets a tool.started through the write-ahead check only once its line is on disk', async () => {
    const { log, bus } = open();
    const started = bus.publish('tool.started', { callId: 'c1', name: 'lookup', args: {}, attempt: 1 });
    const onDisk = () => readFileSync(log.path, 'utf8').includes('"callId":"c1"');
    const waiting = log.assertRecorded(started);
    expect(waiting).toBeInstanceOf(Promise);
    expect(onDisk()).toBe(false);
    await waiting;
    expect(onDisk()).toBe(true);
    expect(log.assertRecorded(started)).toBeUndefined(); // on disk already: no wait
    await log.close();
  });

  it('puts data of lines over maxLineBytes in a side file and references it', async () => {
    const { log, bus, dir } = open({ maxLineBytes: 4_096 });
    const output = 'o'.repeat(50 * 1024 * 1024); // a 50 MB tool output
    const done = bus.publish('tool.completed', { callId: 'big', name: 'dump', args: {}, output, durationMs: 3, attempt: 1 });
    bus.publish('agent.said', { text: 'small stays inline' });
    await log.close();

    const lines = readFileSync(log.path, 'utf8').split('\n');
    expect(lines.every((line) => Buffer.byteLength(line) <= 4_096)).toBe(true);
    const reference = JSON.parse(lines[2] ?? '') as { data: { $side: string; bytes: number } };
    expect(reference.data.$side).toMatch(/^session\.jsonl\.side\/e-1-[0-9a-f]{8}\.json$/);
    expect(reference.data.bytes).toBeGreaterThan(output.length);
    expect(readdirSync(join(dir, 'nested', 'session.jsonl.side'))).toHaveLength(1);

    const referenced = readLog(log.path);
    expect(referenced.events[1]?.data).toEqual(reference.data);
    const loaded = readLog(log.path, { loadSideFiles: true });
    expect(loaded.events[1]?.data).toEqual(done.data);
    expect(loaded.events[2]?.data).toEqual({ text: 'small stays inline' });
  });

  it('records cyclic, BigInt and function data with placeholders instead of failing', async () => {
    const { log, bus } = open();
    const output: Record<string, unknown> = { big: 1n, fn: () => 1 };
    output.self = output;
    bus.publish('tool.completed', { callId: 'c', name: 't', args: {}, output, durationMs: 1, attempt: 1 });
    await log.close();
    expect(log.failure).toBeUndefined();
    expect(readLog(log.path).events[1]?.data).toMatchObject({ output: { big: '1n', fn: '[Function fn]', self: '[Circular]' } });
  });

  it('refuses a side reference that climbs out of the log directory', async () => {
    const { log } = open();
    log.record({ id: 'x', type: 'agent.said', at: 1, data: { $side: '../../etc/passwd', bytes: 1 } as never });
    await log.close();
    const { events, quarantined } = readLog(log.path, { loadSideFiles: true });
    expect(events[1]?.data).toEqual({ $side: '../../etc/passwd', bytes: 1 });
    expect(quarantined[0]?.reason).toMatch(/refused/);
  });

  it('stops recording after close and keeps nothing open', async () => {
    const { log, bus } = open();
    await log.close();
    bus.publish('agent.said', { text: 'late' });
    expect(readLog(log.path).events.map((event) => event.type)).toEqual(['log.opened']);
    expect(existsSync(`${log.path}.lock`)).toBe(false);
    await log.close(); // twice is harmless
  });
});
