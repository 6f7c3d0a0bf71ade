import { describe, expect, it } from 'vitest';
import { steppedClock } from '../../src/bus/ids.js';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { ToolError } from '../../src/tools/tool-error.js';
import { entry, harness, makeTool } from './helpers.js';

// Every `durationMs` comes from the injected clock, so a scripted run publishes the same events
// every time (the agent passes its bus clock).
describe('dispatchCalls: the injected clock', () => {
  it('takes every durationMs from the clock, for events and results', async () => {
    const h = harness({ clock: steppedClock(1_000, 7) });
    const results = await dispatchCalls([entry(makeTool('sync', () => 'a'), {}, 's'), entry(makeTool('async', async () => 'b'), {}, 'a')], h.options);
    // each attempt reads the clock when it starts and when it ends: 7 ms apart on this clock
    expect(h.of('tool.completed').map((event) => [event.data.callId, event.data.durationMs])).toEqual([['s', 7], ['a', 7]]);
    expect(results.map((result) => result.durationMs)).toEqual([7, 7]);
  });

  it('measures a retried call from its first start', async () => {
    let attempts = 0;
    const flaky = makeTool('flaky', () => {
      if (++attempts < 3) throw new ToolError('try again', { kind: 'network' });
      return 'ok';
    }, { retry: { attempts: 3 } });
    const h = harness({ clock: steppedClock(0, 10), sleep: async () => {} });
    const [result] = await dispatchCalls([entry(flaky)], h.options);
    expect(h.of('tool.failed').map((event) => event.data.durationMs)).toEqual([10, 10]);
    expect(h.of('tool.completed')[0]?.data.durationMs).toBe(10);
    // starts at 0, 20, 40; the last attempt ends at 50
    expect(result).toMatchObject({ status: 'completed', attempts: 3, durationMs: 50 });
  });

  it('gives identical events for identical scripted runs', async () => {
    const run = async () => {
      const h = harness({ clock: steppedClock(5, 3) });
      const tools = [makeTool('a', () => ({ n: 1 })), makeTool('b', async () => ({ n: 2 })), makeTool('c', () => Promise.reject(new Error('no')))];
      await dispatchCalls(tools.map((tool, index) => entry(tool, { index }, `c${index}`)), h.options);
      return h.events;
    };
    const first = await run();
    expect(first.map((event) => event.type)).toContain('tool.failed');
    expect(await run()).toEqual(first);
  });
});
