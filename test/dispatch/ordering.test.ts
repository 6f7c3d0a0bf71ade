import { describe, expect, it } from 'vitest';
import { dispatchCalls } from '../../src/tools/dispatch-calls.js';
import { createToolLimiters } from '../../src/tools/acquire-slot.js';
import { deferred, entry, flush, harness, makeTool } from './helpers.js';

function gatedTool(name: string, readOnly: boolean) {
  const gates = new Map<string, ReturnType<typeof deferred<string>>>();
  const tool = makeTool(name, (_args, { callId }) => {
    const gate = deferred<string>();
    gates.set(callId, gate);
    return gate.promise;
  }, { readOnly });
  return { tool, open: (callId: string) => gates.get(callId)?.resolve(`${callId} done`), started: () => [...gates.keys()] };
}

// Writers run one at a time in model order; read-only calls run concurrently;
// results come back in model order whatever finished first. Proven with deferred promises
// resolved in reverse, never with wall-clock time.
describe('dispatchCalls: ordering', () => {
  it('runs read-only calls concurrently and returns them in model order', async () => {
    const h = harness();
    const reader = gatedTool('read', true);
    const turn = dispatchCalls([entry(reader.tool, {}, 'r1'), entry(reader.tool, {}, 'r2'), entry(reader.tool, {}, 'r3')], h.options);
    await flush();
    expect(reader.started().sort()).toEqual(['r1', 'r2', 'r3']); // all three in flight together
    for (const callId of ['r3', 'r2', 'r1']) {
      reader.open(callId);
      await flush();
    }
    const results = await turn;
    expect(results.map((result) => result.callId)).toEqual(['r1', 'r2', 'r3']);
    expect(results.map((result) => result.status === 'completed' && result.output)).toEqual(['r1 done', 'r2 done', 'r3 done']);
    expect(h.trace(['tool.completed'])).toEqual(['tool.completed:r3#1', 'tool.completed:r2#1', 'tool.completed:r1#1']);
    expect(h.trace(['tool.started']).length).toBe(3);
    expect(h.events.findIndex((event) => event.type === 'tool.completed')).toBeGreaterThan(
      h.events.findLastIndex((event) => event.type === 'tool.started'),
    );
  });

  it('runs a turn with a writer one call at a time in model order', async () => {
    const h = harness();
    const reader = gatedTool('read', true);
    const writer = gatedTool('write', false);
    const turn = dispatchCalls(
      [entry(reader.tool, {}, 'r1'), entry(writer.tool, {}, 'w1'), entry(reader.tool, {}, 'r2'), entry(writer.tool, {}, 'w2')],
      h.options,
    );
    const order = ['r1', 'w1', 'r2', 'w2'];
    for (const [index, callId] of order.entries()) {
      await flush();
      // only the current call has started; the next waits for it
      expect([...reader.started(), ...writer.started()].sort()).toEqual(order.slice(0, index + 1).sort());
      (callId.startsWith('r') ? reader : writer).open(callId);
    }
    const results = await turn;
    expect(results.map((result) => result.callId)).toEqual(order);
    expect(h.trace()).toEqual(order.flatMap((callId) => [`tool.started:${callId}#1`, `tool.completed:${callId}#1`]));
  });

  it('runs read-only calls one at a time when `sequential` is set (approval in the turn)', async () => {
    const h = harness({ sequential: true });
    const reader = gatedTool('read', true);
    const turn = dispatchCalls([entry(reader.tool, {}, 's1'), entry(reader.tool, {}, 's2')], h.options);
    await flush();
    expect(reader.started()).toEqual(['s1']);
    reader.open('s1');
    await flush();
    expect(reader.started()).toEqual(['s1', 's2']);
    reader.open('s2');
    expect((await turn).map((result) => result.status)).toEqual(['completed', 'completed']);
  });

  it("honours a tool's own concurrency, shared through one limiter map", async () => {
    const toolLimiters = createToolLimiters();
    const h = harness({ toolLimiters });
    const gates: Array<() => void> = [];
    let running = 0;
    let highWater = 0;
    const tool = makeTool('narrow', async () => {
      running++;
      highWater = Math.max(highWater, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
    }, { concurrency: 2 });
    const turn = dispatchCalls([entry(tool), entry(tool), entry(tool), entry(tool), entry(tool)], h.options);
    let done = false;
    void turn.then(() => (done = true));
    for (let round = 0; round < 10 && !done; round++) {
      await flush();
      expect(running).toBeLessThanOrEqual(2);
      gates.splice(0).forEach((open) => open());
    }
    const results = await turn;
    expect(results.every((result) => result.status === 'completed')).toBe(true);
    expect(highWater).toBe(2);
    expect(toolLimiters.get('narrow')?.concurrency).toBe(2);
  });
});
