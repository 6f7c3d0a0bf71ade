import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { deferred, entry, flush, harness, makeTool, untilAborted } from './helpers.js';

// An abort during dispatch aborts running signals and fails queued calls at once;
// nothing is left pending, and a shared limiter is never cleared.
describe('dispatchCalls: abort mid-dispatch', () => {
  it('aborts running calls and fails queued ones immediately, without starting them', async () => {
    const limiter = pLimit(1);
    const h = harness({ limiter });
    const signals: AbortSignal[] = [];
    const executed: string[] = [];
    const slow = makeTool('slow', (_args, { signal, callId }) => {
      executed.push(callId);
      signals.push(signal);
      return untilAborted(signal);
    });
    const turn = dispatchCalls([entry(slow, {}, 'a'), entry(slow, {}, 'b'), entry(slow, {}, 'c')], h.options);
    await flush();
    expect(executed).toEqual(['a']);
    expect(limiter.pendingCount).toBe(2);

    h.controller.abort(new Error('agent stopped'));
    const results = await turn;
    expect(results.map((result) => [result.callId, result.status, result.status === 'failed' && result.error.kind, result.attempts])).toEqual([
      ['a', 'failed', 'aborted', 1],
      ['b', 'failed', 'aborted', 0],
      ['c', 'failed', 'aborted', 0],
    ]);
    expect(results[0]?.status === 'failed' && results[0].error.message).toBe('the call was aborted: agent stopped');
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    expect(executed).toEqual(['a']);
    expect(h.trace()).toEqual(['tool.started:a#1', 'tool.failed:a#1', 'tool.failed:b#0', 'tool.failed:c#0']);
    // the slots queued for b and c come round, run nothing, and free the limiter
    await flush();
    expect(limiter.activeCount).toBe(0);
    expect(limiter.pendingCount).toBe(0);
    expect(executed).toEqual(['a']);
  });

  it("leaves other agents' tasks on a shared limiter alone", async () => {
    const limiter = pLimit(1);
    const first = harness({ limiter });
    const second = harness({ limiter });
    const gate = deferred<string>();
    const blocker = makeTool('blocker', (_args, { signal }) => untilAborted(signal));
    const other = makeTool('other', () => gate.promise);
    const aborted = dispatchCalls([entry(blocker), entry(blocker)], first.options);
    await flush();
    const survivor = dispatchCalls([entry(other, {}, 'o')], second.options);
    await flush();
    first.controller.abort();
    await aborted;
    gate.resolve('done');
    expect((await survivor)[0]).toMatchObject({ callId: 'o', status: 'completed', output: 'done' });
  });

  it('in sequential mode fails the calls after an abort with attempt 0 and no tool.started', async () => {
    const h = harness();
    const executed: string[] = [];
    const writer = makeTool('write', (_args, { signal, callId }) => {
      executed.push(callId);
      return untilAborted(signal);
    }, { readOnly: false });
    const turn = dispatchCalls([entry(writer, {}, 'w1'), entry(writer, {}, 'w2'), entry(writer, {}, 'w3')], h.options);
    await flush();
    h.controller.abort();
    const results = await turn;
    expect(executed).toEqual(['w1']);
    expect(results.map((result) => result.attempts)).toEqual([1, 0, 0]);
    expect(results.every((result) => result.status === 'failed' && result.error.kind === 'aborted')).toBe(true);
    expect(h.trace()).toEqual(['tool.started:w1#1', 'tool.failed:w1#1', 'tool.failed:w2#0', 'tool.failed:w3#0']);
  });

  it('runs nothing when the signal is already aborted', async () => {
    const h = harness();
    h.controller.abort();
    let ran = false;
    const tool = makeTool('t', () => {
      ran = true;
    });
    const results = await dispatchCalls([entry(tool), entry(tool)], h.options);
    expect(ran).toBe(false);
    expect(results.map((result) => result.status)).toEqual(['failed', 'failed']);
    expect(h.of('tool.started')).toEqual([]);
  });

  it('treats a queued task rejected by a clearQueue({ rejectOnClear }) as aborted, never pending', async () => {
    const limiter = pLimit({ concurrency: 1, rejectOnClear: true });
    const h = harness({ limiter });
    const gate = deferred<string>();
    const tool = makeTool('t', () => gate.promise);
    const turn = dispatchCalls([entry(tool), entry(tool)], h.options);
    await flush();
    limiter.clearQueue(); // someone else's teardown
    gate.resolve('x');
    const results = await turn;
    expect(results.map((result) => result.status)).toEqual(['completed', 'failed']);
    expect(results[1]).toMatchObject({ error: { kind: 'aborted' }, attempts: 0 });
  });
});
