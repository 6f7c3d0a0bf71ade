import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { sequentialIds } from '../../src/bus/ids.js';
import { LogError } from '../../src/errors.js';
import { logFs, type LogFs } from '../../src/record/log-fs.js';
import { createSessionLog, type SessionLogOptions } from '../../src/record/session-log.js';
import { dispatchCalls, type Publish } from '../../src/tools/dispatch-calls.js';
import type { Tool } from '../../src/tools/types.js';
import { tempDir } from './helpers.js';

/** An fsync held until the test lets it complete (or fail), counting every fsync of either kind. */
function heldFsync() {
  const real = logFs();
  const pending: { fd: number; callback: (error: NodeJS.ErrnoException | null) => void }[] = [];
  const counts = { async: 0, sync: 0 };
  const fs: Partial<LogFs> = {
    fsync: (fd, callback) => {
      counts.async++;
      pending.push({ fd, callback });
    },
    fsyncSync: (fd) => {
      counts.sync++;
      real.fsyncSync(fd);
    },
  };
  /** `late`: the file was closed meanwhile, so the real fsync is left out (its fd is gone). */
  const complete = (error: NodeJS.ErrnoException | null = null, late = false): void => {
    const next = pending.shift();
    if (next === undefined) throw new Error('no fsync in flight');
    if (error === null && !late) real.fsyncSync(next.fd);
    next.callback(error);
  };
  return { fs, pending, counts, complete };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has settled by now (after the microtasks queued so far). */
async function settled(promise: Promise<unknown> | void): Promise<boolean> {
  let done = false;
  void Promise.resolve(promise).then(
    () => (done = true),
    () => (done = true),
  );
  for (let index = 0; index < 5; index++) await Promise.resolve();
  return done;
}

describe('session log: the fsync runs on the thread pool', () => {
  let cleanup = (): void => {};
  afterEach(() => cleanup());
  const open = (options: SessionLogOptions) => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const log = createSessionLog(join(temp.dir, 'session.jsonl'), options);
    const bus = createBus({ ids: sequentialIds('e') });
    log.attach(bus);
    return { log, bus };
  };
  const start = (bus: ReturnType<typeof createBus>, callId: string) => bus.publish('tool.started', { callId, name: 't', args: {}, attempt: 1 });

  it('lets a start through only once the fsync that covers it completes; one fsync in flight, the next covering all that came meanwhile', async () => {
    const held = heldFsync();
    const { log, bus } = open({ fs: held.fs });
    const first = log.assertRecorded(start(bus, 'a'));
    await nextTurn(); // the burst is written, its fsync started
    expect(readFileSync(log.path, 'utf8')).toContain('"callId":"a"');
    expect(held.counts.async).toBe(1);
    expect(await settled(first)).toBe(false);

    // Two more starts, in two bursts, while the fsync runs: neither starts one of its own.
    const second = log.assertRecorded(start(bus, 'b'));
    await nextTurn();
    const third = log.assertRecorded(start(bus, 'c'));
    await nextTurn();
    expect(held.counts.async).toBe(1);
    expect(readFileSync(log.path, 'utf8')).toContain('"callId":"c"');

    held.complete();
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(false); // written after the fsync started: not covered
    expect(await settled(third)).toBe(false);
    expect(held.counts.async).toBe(2); // the next started at once, for both

    held.complete();
    expect(await settled(second)).toBe(true);
    expect(await settled(third)).toBe(true);
    expect(held.pending).toHaveLength(0);
    expect(held.counts.sync).toBe(1); // the header's own, when the log was created
    await log.close();
  });

  it('a failing fsync stops the log: every waiting start is rejected with a LogError, and no tool runs', async () => {
    const held = heldFsync();
    const errors: LogError[] = [];
    const { log, bus } = open({ fs: held.fs, onError: (error) => errors.push(error) });
    let runs = 0;
    const tool = { kind: 'tool', name: 'write_file', description: 'Writes a file.', parameters: { type: 'object', properties: {} }, readOnly: false, execute: () => ++runs } as Tool;
    const publish: Publish = (type, data) => bus.publish(type, data, { agent: 'a' });
    const turn = dispatchCalls([{ call: { callId: 'c1', name: 'write_file', args: {} }, tool }], {
      signal: new AbortController().signal,
      agent: 'a',
      publish,
      assertRecorded: log.assertRecorded,
    });
    const other = log.assertRecorded(start(bus, 'other'));
    turn.catch(() => undefined);
    (other as Promise<void>).catch(() => undefined);
    await nextTurn();
    expect(held.pending).toHaveLength(1);
    held.complete(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    await expect(turn).rejects.toThrow(LogError);
    await expect(turn).rejects.toThrow(/tool.started\) was not recorded: .*at an fsync: EIO/);
    await expect(other).rejects.toThrow(LogError);
    expect(runs).toBe(0);
    expect(errors).toHaveLength(1);
    expect(log.failure?.code).toBe('log_write_failed');
    expect(log.record(start(bus, 'later'))).toBe(false);
    log.closeSync();
  });

  it('flush, closeSync and close force everything to disk before they return, whatever fsync is in flight', async () => {
    const held = heldFsync();
    const { log, bus } = open({ fs: held.fs });
    const first = log.assertRecorded(start(bus, 'a'));
    await nextTurn();
    expect(held.pending).toHaveLength(1);
    // A checkpoint's flush: synchronous, and it lets the start through.
    log.flush();
    expect(held.counts.sync).toBe(2);
    expect(await settled(first)).toBe(true);
    held.complete(); // late, and harmless

    const second = log.assertRecorded(start(bus, 'b'));
    await nextTurn();
    expect(held.pending).toHaveLength(1);
    log.closeSync();
    expect(held.counts.sync).toBeGreaterThanOrEqual(3);
    await expect(second).resolves.toBeUndefined(); // forced to disk by the close, not rejected
    held.complete(null, true); // completes after the close: ignored
    expect(log.failure).toBeUndefined();
  });

  it('close waits for the fsync in flight before it closes the file', async () => {
    const held = heldFsync();
    const { log, bus } = open({ fs: held.fs });
    const first = log.assertRecorded(start(bus, 'a'));
    await nextTurn();
    let closed = false;
    const closing = log.close().then(() => (closed = true));
    await nextTurn();
    expect(closed).toBe(false);
    held.complete();
    await closing;
    await expect(first).resolves.toBeUndefined();
    expect(() => log.assertRecorded(start(bus, 'b'))).toThrow(/closed/);
  });

  it('an injected fsyncSync alone also serves the asynchronous fsync', async () => {
    const real = logFs();
    let syncs = 0;
    const { log, bus } = open({ fs: { fsyncSync: (fd) => void (syncs++, real.fsyncSync(fd)) } });
    syncs = 0;
    await log.assertRecorded(start(bus, 'a'));
    expect(syncs).toBe(1);
    await log.close();
  });
});
