import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { LogError } from '../../src/errors.js';
import { deferred, entry, flush, harness, makeTool } from './helpers.js';

// The write-ahead check, from the dispatcher's side of a log that fails closed: a call whose
// tool.started could not be recorded never runs, and the round rejects with the host error.
describe('dispatchCalls: write-ahead check', () => {
  it('does not execute when assertRecorded throws, and rejects with that error', async () => {
    const failure = new LogError('log_write_failed', 'disk full');
    const h = harness({
      assertRecorded: () => {
        throw failure;
      },
    });
    let ran = false;
    const tool = makeTool('write', () => {
      ran = true;
    }, { readOnly: false });
    await expect(dispatchCalls([entry(tool), entry(tool)], h.options)).rejects.toBe(failure);
    expect(ran).toBe(false);
    expect(h.of('tool.started')).toHaveLength(1); // the second call never even started
  });

  it('aborts the rest of a concurrent turn when one start cannot be recorded', async () => {
    let count = 0;
    const h = harness({
      assertRecorded: () => {
        if (++count === 2) throw new LogError('log_write_failed', 'EIO');
      },
    });
    const gate = deferred();
    const signals: AbortSignal[] = [];
    const ran: string[] = [];
    const tool = makeTool('read', (_args, { signal, callId }) => {
      ran.push(callId);
      signals.push(signal);
      return gate.promise;
    });
    const turn = dispatchCalls([entry(tool, {}, 'x1'), entry(tool, {}, 'x2'), entry(tool, {}, 'x3')], h.options);
    await flush();
    await expect(turn).rejects.toThrow('EIO');
    expect(ran).toEqual(['x1']);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('treats a throwing publish as a host failure too', async () => {
    const h = harness();
    const options = {
      ...h.options,
      publish: (() => {
        throw new Error('bus gone');
      }) as typeof h.options.publish,
    };
    let ran = false;
    await expect(dispatchCalls([entry(makeTool('t', () => (ran = true)))], options)).rejects.toThrow('bus gone');
    expect(ran).toBe(false);
  });

  it('holds no limiter slot while a start waits for the disk, and runs the calls within the limit after', async () => {
    // Every start waits on one commit: with a limit of 2, the five of them are all on record
    // before any runs (a slot held while waiting would have let only two start at a time).
    const commit = deferred();
    const limiter = pLimit(2);
    const h = harness({ limiter, sequential: false, assertRecorded: () => commit.promise });
    let running = 0;
    let most = 0;
    const tool = makeTool('slow', async () => {
      most = Math.max(most, ++running);
      await flush();
      running--;
      return 'ok';
    });
    const turn = dispatchCalls(['a', 'b', 'c', 'd', 'e'].map((id) => entry(tool, {}, id)), h.options);
    await flush();
    expect(h.of('tool.started')).toHaveLength(5);
    expect(limiter.activeCount).toBe(0);
    commit.resolve();
    const results = await turn;
    expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
    expect(most).toBe(2);
    expect(limiter.activeCount).toBe(0);
  });
});
