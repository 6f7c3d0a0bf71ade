import { describe, expect, it } from 'vitest';
import { defineTool, scriptedProvider } from '../../src/index.js';
import { act, ofType, recordedScene } from './helpers.js';

/** A tool that records the most executions it ever saw at once. */
function gauge(name: string) {
  const state = { active: 0, peak: 0, done: [] as string[] };
  const tool = defineTool({
    name,
    description: 'Takes a moment.',
    parameters: { type: 'object', properties: {} },
    readOnly: true,
    execute: async (_args, { agent }) => {
      state.active++;
      state.peak = Math.max(state.peak, state.active);
      await new Promise((resolve) => setTimeout(resolve, 1));
      state.active--;
      state.done.push(agent);
      return 'ok';
    },
  });
  return { tool, state };
}

describe('the scene-wide keyed limiter', () => {
  it('never exceeds the global tool limit under 50 agents, and no agent starves', async () => {
    const { tool, state } = gauge('work');
    const { scene } = recordedScene({ schedule: 'every-tick', concurrency: { tools: 3, turns: 50 } });
    for (let index = 0; index < 50; index++) scene.add({ name: `worker${index}`, tools: [tool], brain: () => act('work') });
    await scene.run({ ticks: 2 });
    expect(state.peak).toBeGreaterThan(1);
    expect(state.peak).toBeLessThanOrEqual(3);
    expect(new Set(state.done).size).toBe(50);
    expect(state.done).toHaveLength(100);
  });

  it('caps concurrent calls per tool across agents', async () => {
    const { tool, state } = gauge('narrow');
    const { scene } = recordedScene({ schedule: 'every-tick', concurrency: { toolCalls: { narrow: 1 } } });
    for (let index = 0; index < 8; index++) scene.add({ name: `n${index}`, tools: [tool], brain: () => act('narrow') });
    await scene.step();
    expect(state.peak).toBe(1);
    expect(state.done).toHaveLength(8);
    await scene.stop();
  });

  it('caps concurrent model calls per provider', async () => {
    let active = 0;
    let peak = 0;
    const slow = scriptedProvider(async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 1));
      active--;
      return 'done';
    }, { name: 'slowmodel' });
    const { scene, events } = recordedScene({ schedule: 'every-tick', concurrency: { modelCalls: { slowmodel: 2 } } });
    for (let index = 0; index < 6; index++) scene.add({ name: `m${index}`, provider: slow });
    await scene.step();
    expect(peak).toBe(2);
    expect(ofType(events, 'agent.finished').map((event) => event.data.reason)).toEqual(Array(6).fill('final_answer'));
    await scene.stop();
  });

  it('limits turns in flight per tick without dropping any', async () => {
    let active = 0;
    let peak = 0;
    const { scene } = recordedScene({ schedule: 'every-tick', concurrency: { turns: 4 } });
    for (let index = 0; index < 20; index++) {
      scene.add({
        name: `t${index}`,
        brain: async () => {
          active++;
          peak = Math.max(peak, active);
          await new Promise((resolve) => setTimeout(resolve, 1));
          active--;
          return 'ok';
        },
      });
    }
    const report = await scene.step();
    expect(report.turns).toBe(20);
    expect(peak).toBe(4);
    await scene.stop();
  });
});
