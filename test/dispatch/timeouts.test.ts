import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDispatchStats } from '../../src/tools/dispatch-stats.js';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { deferred, entry, harness, makeTool, untilAborted } from './helpers.js';

// A tool that never settles times out; one that ignores its signal is a zombie
// whose late result is reported and discarded, never delivered.
describe('dispatchCalls: timeouts and zombies', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails a call at its timeoutMs with kind timeout, aborting its signal, and the agent goes on', async () => {
    const h = harness();
    let seen: AbortSignal | undefined;
    const slow = makeTool('slow', (_args, { signal }) => {
      seen = signal;
      return untilAborted(signal);
    }, { timeoutMs: 1_000 });
    const turn = dispatchCalls([entry(slow)], h.options);
    let settled = false;
    void turn.then(() => (settled = true));

    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const [result] = await turn;
    expect(result).toMatchObject({ status: 'failed', error: { kind: 'timeout', retryable: true }, attempts: 1 });
    expect(result?.status === 'failed' && result.error.message).toBe('tool "slow" did not finish within 1000 ms');
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as DOMException).name).toBe('TimeoutError');
    // a well-behaved tool rejected on abort: no zombie
    await vi.advanceTimersByTimeAsync(5_000);
    expect(h.of('tool.zombie')).toEqual([]);

    // the same agent dispatches again
    const [next] = await dispatchCalls([entry(makeTool('fast', () => 'ok'))], h.options);
    expect(next).toMatchObject({ status: 'completed', output: 'ok' });
  });

  it('applies the default timeout (30 s) and honours 0 as no limit', async () => {
    const h = harness();
    const hang = makeTool('hang', (_args, { signal }) => untilAborted(signal));
    const turn = dispatchCalls([entry(hang)], h.options);
    await vi.advanceTimersByTimeAsync(30_000);
    expect((await turn)[0]).toMatchObject({ error: { kind: 'timeout' } });

    const free = dispatchCalls([entry(hang)], { ...h.options, defaultTimeoutMs: 0 });
    let settled = false;
    void free.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(settled).toBe(false);
    h.controller.abort();
    expect((await free)[0]).toMatchObject({ error: { kind: 'aborted' } });
  });

  it('counts a never-settling tool that ignores its signal as a zombie, reported once', async () => {
    const stats = createDispatchStats();
    const h = harness({ stats, zombieGraceMs: 1_000 });
    const deaf = makeTool('deaf', () => new Promise(() => {}), { timeoutMs: 500 });
    const turn = dispatchCalls([entry(deaf)], h.options);
    await vi.advanceTimersByTimeAsync(500);
    // the dispatcher did not wait for the tool
    expect((await turn)[0]).toMatchObject({ status: 'failed', error: { kind: 'timeout' } });
    expect(h.of('tool.zombie')).toEqual([]);

    await vi.advanceTimersByTimeAsync(1_000);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.of('tool.zombie').map((event) => event.data)).toEqual([{ callId: expect.any(String), name: 'deaf', settled: 'pending' }]);
    expect(stats).toMatchObject({ zombies: 1, zombiesRunning: 1, timeouts: 1 });
  });

  it('discards a late result: published as tool.zombie, never delivered, never twice', async () => {
    const stats = createDispatchStats();
    const h = harness({ stats });
    const late = deferred<string>();
    const deaf = makeTool('deaf', () => late.promise, { timeoutMs: 100 });
    const turn = dispatchCalls([entry(deaf, {}, 'z1')], h.options);
    await vi.advanceTimersByTimeAsync(100);
    const results = await turn;
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 'failed', error: { kind: 'timeout' } });

    late.resolve('too late');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(h.of('tool.zombie').map((event) => event.data)).toEqual([
      { callId: 'z1', name: 'deaf', settled: 'resolved', lateOutput: 'too late' },
    ]);
    expect(h.of('tool.completed')).toEqual([]);
    expect(results[0]?.status).toBe('failed'); // the delivered result never changes
    expect(stats).toMatchObject({ zombies: 1, zombiesRunning: 0, lateResultsDiscarded: 1 });
  });

  it('reports a zombie that settles after its pending report as resolved, and the counter drops', async () => {
    const stats = createDispatchStats();
    const h = harness({ stats, zombieGraceMs: 200 });
    const late = deferred<string>();
    const deaf = makeTool('deaf', () => late.promise, { timeoutMs: 100 });
    const turn = dispatchCalls([entry(deaf)], h.options);
    await vi.advanceTimersByTimeAsync(300);
    await turn;
    expect(stats.zombiesRunning).toBe(1);
    late.resolve('finally');
    await vi.advanceTimersByTimeAsync(0);
    expect(h.of('tool.zombie').map((event) => event.data.settled)).toEqual(['pending', 'resolved']);
    expect(stats).toMatchObject({ zombies: 1, zombiesRunning: 0, lateResultsDiscarded: 1 });
  });
});
