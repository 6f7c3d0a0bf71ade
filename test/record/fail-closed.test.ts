import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus } from '../../src/bus/bus.js';
import { LogError } from '../../src/errors.js';
import { createSessionLog } from '../../src/record/session-log.js';
import { logFs } from '../../src/record/log-fs.js';
import { dispatchCalls, type Publish } from '../../src/tools/dispatch-calls.js';
import type { Tool } from '../../src/tools/types.js';
import { tempDir } from './helpers.js';


function countingTool(): { tool: Tool; runs: () => number } {
  let runs = 0;
  const tool = {
    kind: 'tool',
    name: 'write_file',
    description: 'Writes a file.',
    parameters: { type: 'object', properties: {} },
    readOnly: false,
    execute: () => ++runs,
  } as Tool;
  return { tool, runs: () => runs };
}

// When a write fails the log fails closed: no tool runs whose tool.started could
// not be recorded, and the error is clear.
describe('session log: write failures fail closed', () => {
  let cleanup = (): void => {};
  afterEach(() => cleanup());

  it('throws a LogError at once for a directory it cannot create or write', () => {
    expect(() => createSessionLog('/proc/troupe-no-such-dir/session.jsonl')).toThrow(LogError);
    expect(() => createSessionLog('/proc/troupe-no-such-dir/session.jsonl')).toThrow(/cannot create the directory of session log/);
  });

  it('throws a LogError when the log would sit under a file (root cannot write there either)', () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const file = join(temp.dir, 'plain-file');
    writeFileSync(file, 'not a directory');
    expect(() => createSessionLog(join(file, 'session.jsonl'))).toThrow(LogError);
  });

  it.each(['ENOSPC', 'EACCES', 'EROFS'])('does not dispatch a tool whose tool.started hit %s', async (code) => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const real = logFs();
    let broken = false;
    const errors: LogError[] = [];
    const log = createSessionLog(join(temp.dir, 'session.jsonl'), {
      onError: (error) => errors.push(error),
      fs: {
        writeSync: (fd, buffer, offset, length) => {
          if (broken) throw Object.assign(new Error(`${code}: write failed`), { code });
          return real.writeSync(fd, buffer, offset, length);
        },
      },
    });
    const bus = createBus();
    log.attach(bus);
    bus.publish('agent.said', { text: 'recorded before the disk filled up' });
    log.flush();
    broken = true;

    const { tool, runs } = countingTool();
    const publish: Publish = (type, data) => bus.publish(type, data, { agent: 'a' });
    const turn = dispatchCalls([{ call: { callId: 'c1', name: 'write_file', args: {} }, tool }], {
      signal: new AbortController().signal,
      agent: 'a',
      publish,
      assertRecorded: log.assertRecorded,
    });
    await expect(turn).rejects.toThrow(LogError);
    await expect(turn).rejects.toThrow(new RegExp(`tool.started\\) was not recorded: .*${code}`));
    expect(runs()).toBe(0);
    expect(errors).toHaveLength(1);
    expect(log.failure?.code).toBe('log_write_failed');
    await log.close();
  });

  it('refuses a tool.started that never reached this log (not attached to that bus)', async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    const log = createSessionLog(join(temp.dir, 'session.jsonl'));
    const elsewhere = createBus().publish('tool.started', { callId: 'c', name: 't', args: {}, attempt: 1 });
    expect(() => log.assertRecorded(elsewhere)).toThrow(/is the log attached to the bus/);
    log.record(elsewhere);
    // Recorded, and on disk once the burst is written: the write-ahead check waits for that.
    await expect(log.assertRecorded(elsewhere)).resolves.toBeUndefined();
    await log.close();
    expect(() => log.assertRecorded(elsewhere)).toThrow(/closed/);
  });
});
