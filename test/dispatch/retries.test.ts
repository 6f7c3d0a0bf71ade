import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDispatchStats } from '../../src/tools/dispatch-stats.js';
import { backoff, dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { ToolError } from '../../src/tools/tool-error.js';
import { entry, harness, makeTool } from './helpers.js';

const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

/** A tool failing with `error` for the first `failures` attempts, then answering 'ok'. */
function flaky(failures: number, error: () => unknown, extra: Parameters<typeof makeTool>[2] = {}) {
  let attempts = 0;
  const tool = makeTool('flaky', () => {
    attempts++;
    if (attempts <= failures) throw error();
    return 'ok';
  }, { retry: { attempts: 3, backoffMs: 100 }, ...extra });
  return { tool, attempts: () => attempts };
}

// Retryable failures are retried with exponential backoff up to the tool policy,
// each attempt published; writers are retried only when idempotent.
describe('dispatchCalls: retries', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('retries a network failure with doubling backoff and publishes every attempt', async () => {
    const stats = createDispatchStats();
    const h = harness({ stats });
    const { tool, attempts } = flaky(2, reset);
    const turn = dispatchCalls([entry(tool, {}, 'f')], h.options);
    await vi.advanceTimersByTimeAsync(0);
    expect(attempts()).toBe(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(attempts()).toBe(1); // still backing off
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts()).toBe(2);
    await vi.advanceTimersByTimeAsync(199);
    expect(attempts()).toBe(2); // the second delay is doubled
    await vi.advanceTimersByTimeAsync(1);
    const [result] = await turn;
    expect(result).toMatchObject({ status: 'completed', output: 'ok', attempts: 3 });
    expect(h.trace()).toEqual(['tool.started:f#1', 'tool.failed:f#1', 'tool.started:f#2', 'tool.failed:f#2', 'tool.started:f#3', 'tool.completed:f#3']);
    expect(h.of('tool.failed').map((event) => event.data.error)).toEqual(Array(2).fill({
      kind: 'network',
      message: 'socket hang up',
      retryable: true,
      hint: expect.any(String),
    }));
    expect(stats.retries).toBe(2);
  });

  it('retries an HTTP 429 and gives up after the policy, returning the last failure', async () => {
    const h = harness();
    const { tool, attempts } = flaky(5, () => Object.assign(new Error('Too Many Requests'), { status: 429 }));
    const turn = dispatchCalls([entry(tool)], h.options);
    await vi.advanceTimersByTimeAsync(10_000);
    const [result] = await turn;
    expect(attempts()).toBe(3);
    expect(result).toMatchObject({ status: 'failed', attempts: 3, error: { kind: 'rate_limit', retryable: true } });
  });

  it('does not retry non-retryable failures', async () => {
    const h = harness();
    const { tool, attempts } = flaky(1, () => new ToolError('bad input', { kind: 'execution' }));
    const turn = dispatchCalls([entry(tool)], h.options);
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await turn)[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(attempts()).toBe(1);
  });

  it('never retries a writer automatically, unless it is idempotent', async () => {
    const writer = flaky(1, reset, { readOnly: false });
    const h = harness();
    const once = dispatchCalls([entry(writer.tool)], h.options);
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await once)[0]).toMatchObject({ status: 'failed', attempts: 1, error: { kind: 'network', retryable: true } });
    expect(writer.attempts()).toBe(1);

    const idempotent = flaky(1, reset, { readOnly: false, idempotent: true });
    const twice = dispatchCalls([entry(idempotent.tool)], h.options);
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await twice)[0]).toMatchObject({ status: 'completed', attempts: 2 });
  });

  it('retries a timeout when the policy allows', async () => {
    const h = harness();
    let attempts = 0;
    const tool = makeTool('sometimes_slow', (_args, { signal }) => {
      attempts++;
      if (attempts === 1) return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      return 'fast now';
    }, { timeoutMs: 50, retry: { attempts: 2, backoffMs: 10 } });
    const turn = dispatchCalls([entry(tool)], h.options);
    await vi.advanceTimersByTimeAsync(100);
    expect((await turn)[0]).toMatchObject({ status: 'completed', attempts: 2 });
    expect(h.of('tool.failed')[0]?.data.error.kind).toBe('timeout');
  });

  it('stops retrying when the agent aborts during the backoff', async () => {
    const h = harness();
    const { tool, attempts } = flaky(5, reset, { retry: { attempts: 5, backoffMs: 1_000 } });
    const turn = dispatchCalls([entry(tool, {}, 'b')], h.options);
    await vi.advanceTimersByTimeAsync(500);
    h.controller.abort();
    const [result] = await turn;
    expect(attempts()).toBe(1);
    expect(result).toMatchObject({ status: 'failed', attempts: 1, error: { kind: 'aborted', retryable: false } });
    expect(h.trace()).toEqual(['tool.started:b#1', 'tool.failed:b#1', 'tool.failed:b#1']);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(attempts()).toBe(1);
  });

  it('uses an injected sleep', async () => {
    const sleeps: number[] = [];
    const h = harness({ sleep: async (ms) => void sleeps.push(ms) });
    const { tool } = flaky(2, reset, { retry: { attempts: 3, backoffMs: 250, maxBackoffMs: 300 } });
    expect((await dispatchCalls([entry(tool)], h.options))[0]).toMatchObject({ status: 'completed' });
    expect(sleeps).toEqual([250, 300]);
  });

  it('computes backoff: default 100 ms doubled, capped by maxBackoffMs (default 5 s)', () => {
    expect([1, 2, 3, 4].map((attempt) => backoff({}, attempt))).toEqual([100, 200, 400, 800]);
    expect(backoff({}, 10)).toBe(5_000);
    expect(backoff({ retry: { attempts: 9, backoffMs: 1_000, maxBackoffMs: 3_000 } }, 3)).toBe(3_000);
  });
});
