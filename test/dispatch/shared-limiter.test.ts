import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { entry, harness, makeTool } from './helpers.js';

// 50 agents dispatch through one global limiter of 4: the limit is never exceeded
// and every call of every agent completes.
describe('dispatchCalls: a global limiter shared by 50 agents', () => {
  it('never exceeds the limit and starves no agent', async () => {
    const limiter = pLimit(4);
    let running = 0;
    let highWater = 0;
    let activeHighWater = 0;
    const tool = makeTool('lookup', async (args) => {
      running++;
      highWater = Math.max(highWater, running);
      activeHighWater = Math.max(activeHighWater, limiter.activeCount);
      // yield to the event loop a varying number of times so that calls interleave
      for (let index = 0; index < 1 + ((args.n as number) % 3); index++) await new Promise((resolve) => setImmediate(resolve));
      running--;
      return args.n;
    });
    const agents = Array.from({ length: 50 }, (_, agent) => {
      const h = harness({ limiter, agent: `agent-${agent}` });
      return dispatchCalls([0, 1, 2].map((call) => entry(tool, { n: agent * 3 + call }, `a${agent}-c${call}`)), h.options);
    });
    const results = await Promise.all(agents);

    expect(highWater).toBe(4);
    expect(activeHighWater).toBeLessThanOrEqual(4);
    expect(results.flat()).toHaveLength(150);
    for (const [agent, turn] of results.entries()) {
      expect(turn.map((result) => result.status === 'completed' && result.output)).toEqual([0, 1, 2].map((call) => agent * 3 + call));
    }
    expect(limiter.activeCount).toBe(0);
    expect(limiter.pendingCount).toBe(0);
  });
});
