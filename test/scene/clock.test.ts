import { describe, expect, it } from 'vitest';
import { ofType, recordedScene } from './helpers.js';

describe('the scene clock', () => {
  it('stepped: envelope time is simulated time, tick × tickMs, and ids count up', async () => {
    const { scene, events } = recordedScene({ schedule: 'every-tick', clock: { mode: 'stepped', tickMs: 250 } });
    scene.add({ name: 'a', brain: () => 'ok' });
    await scene.run({ ticks: 3 });
    expect(ofType(events, 'scene.tick').map((event) => [event.data.tick, event.at])).toEqual([
      [1, 250],
      [2, 500],
      [3, 750],
    ]);
    expect(events[0]!.id).toBe('test-1');
  });

  it('real time: ticks come by themselves, and run resolves after the asked ticks', async () => {
    const { scene, events } = recordedScene({ schedule: 'every-tick', clock: { mode: 'real', tickMs: 5 } });
    const ticks: number[] = [];
    scene.add({ name: 'a', brain: (p) => (ticks.push(p.tick), 'ok') });
    const result = await scene.run({ ticks: 3 });
    expect(result).toMatchObject({ reason: 'ticks', tick: 3, turns: 3 });
    expect(ticks).toEqual([1, 2, 3]);
    expect(ofType(events, 'scene.stopped')).toHaveLength(1);
  });

  it('accelerated: simulated ticks of one minute pass a hundred times faster', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick', clock: { mode: 'accelerated', tickMs: 600, speed: 100 } });
    scene.add({ name: 'a', brain: () => 'ok' });
    const result = await scene.run({ ticks: 4 });
    expect(result).toMatchObject({ reason: 'ticks', tick: 4 });
  });

  it('real time: a busy agent is not started twice; it takes its next turn once free', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick', clock: { mode: 'real', tickMs: 2 } });
    let active = 0;
    let overlapped = false;
    let turns = 0;
    scene.add({
      name: 'slow',
      brain: async () => {
        if (++active > 1) overlapped = true;
        turns++;
        await new Promise((resolve) => setTimeout(resolve, 15));
        active--;
        return 'done';
      },
    });
    await scene.run({ ticks: 10 });
    expect(overlapped).toBe(false);
    expect(turns).toBeGreaterThan(0);
    expect(turns).toBeLessThan(10);
  });
});
