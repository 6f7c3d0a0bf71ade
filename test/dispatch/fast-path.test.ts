import { getEventListeners } from 'node:events';
import pLimit from 'p-limit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import type { ToolContext } from '../../src/tools/types.js';
import { deferred, entry, flush, harness, makeTool } from './helpers.js';

// The cheap paths: a tool that answers synchronously costs no timer, no listener and no limiter
// task; one that goes async pays only for what it uses. None of it may bend the contract.
describe('dispatchCalls: fast paths keep the contract', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('leaves no timer and no listener on the agent signal behind, sync or async', async () => {
    vi.useFakeTimers();
    const h = harness();
    const results = await dispatchCalls(
      [entry(makeTool('sync', () => ({ a: 1 }))), entry(makeTool('async', async () => ({ b: 2 }))), entry(makeTool('reads', async (_args, { signal }) => signal.aborted))],
      h.options,
    );
    expect(results.map((result) => result.status === 'completed' && result.output)).toEqual([{ a: 1 }, { b: 2 }, false]);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(h.controller.signal, 'abort')).toEqual([]);
  });

  it('does not run a synchronous tool while a shared limiter is full', async () => {
    const limiter = pLimit(1);
    const first = harness({ limiter });
    const second = harness({ limiter });
    const gate = deferred<string>();
    const ran: string[] = [];
    const slow = makeTool('slow', () => gate.promise);
    const quick = makeTool('quick', (_args, { callId }) => {
      ran.push(callId);
      expect(limiter.activeCount).toBeLessThanOrEqual(1);
      return 'quick';
    });
    const holding = dispatchCalls([entry(slow)], first.options);
    expect(limiter.activeCount).toBe(1); // the async call took its slot before anything else ran
    const waiting = dispatchCalls([entry(quick, {}, 'q')], second.options);
    await flush();
    expect(ran).toEqual([]);
    expect(limiter.pendingCount).toBe(1);
    gate.resolve('done');
    expect((await waiting)[0]).toMatchObject({ status: 'completed', output: 'quick' });
    expect(ran).toEqual(['q']);
    await holding;
  });

  it('fails at once when the agent aborts during a tool’s synchronous part', async () => {
    const h = harness();
    const late = deferred<string>();
    // aborts the agent, then ignores its own signal
    const rude = makeTool('rude', () => {
      h.controller.abort(new Error('stop now'));
      return late.promise;
    });
    const [result] = await dispatchCalls([entry(rude)], h.options);
    expect(result).toMatchObject({ status: 'failed', error: { kind: 'aborted', message: 'the call was aborted: stop now' } });
  });

  it('makes the signal on first read, aborted if the attempt already was, and keeps it in a spread', async () => {
    vi.useFakeTimers();
    const h = harness();
    let context: ToolContext | undefined;
    const late = deferred<string>();
    const deaf = makeTool('deaf', (_args, given) => {
      context = given;
      return late.promise;
    }, { timeoutMs: 100 });
    const turn = dispatchCalls([entry(deaf, {}, 'd')], h.options);
    await vi.advanceTimersByTimeAsync(100);
    expect((await turn)[0]).toMatchObject({ error: { kind: 'timeout' } });
    late.resolve('too late');
    await flush();
    expect(h.of('tool.zombie').map((event) => event.data.settled)).toEqual(['resolved']);
    // read only now, after the timeout and the late result
    expect(context?.signal.aborted).toBe(true);
    expect((context?.signal.reason as DOMException).name).toBe('TimeoutError');
    const copy = { ...context };
    expect(copy).toMatchObject({ agent: 'tester', callId: 'd', attempt: 1 });
    expect(copy.signal).toBe(context?.signal);
    expect(Object.keys(copy)).toEqual(['agent', 'callId', 'attempt', 'signal']);
  });

  it('passes scene in the context when the agent runs in one', async () => {
    const h = harness({ scene: 'final' });
    const [result] = await dispatchCalls([entry(makeTool('where', (_args, { scene, agent }) => `${agent}@${scene}`))], h.options);
    expect(result).toMatchObject({ output: 'tester@final' });
  });

  it('runs more read-only calls than the default turn limit, at most 8 at a time', async () => {
    const h = harness();
    let running = 0;
    let highWater = 0;
    const tool = makeTool('wide', async () => {
      running++;
      highWater = Math.max(highWater, running);
      await flush(3);
      running--;
      return 'ok';
    });
    const results = await dispatchCalls(Array.from({ length: 20 }, () => entry(tool)), h.options);
    expect(results.every((result) => result.status === 'completed')).toBe(true);
    expect(highWater).toBe(8);
  });
});
