import { describe, expect, it } from 'vitest';
import { ConfigError, createScene, defineTool, type Perception, type Scene } from '../../src/index.js';
import { serializeEnvelope } from '../../src/bus/index.js';

/** A crowd of scripted walkers whose turns finish at once. */
function walkers(count: number, yieldEveryMs: number): Scene {
  const scene = createScene({ name: 'walk', seed: 1, schedule: 'every-tick', yieldEveryMs });
  for (let index = 0; index < count; index++) scene.add({ name: `w${index}`, brain: () => 'step' });
  return scene;
}

/** A market of random brains whose bets wait on the world's lock (turns that settle on promises). */
function market(yieldEveryMs: number): Promise<string[]> {
  const scene = createScene({ name: 'dice', seed: 42, schedule: 'every-tick', world: { pot: 0 }, concurrency: { turns: 3 }, yieldEveryMs });
  const lines: string[] = [];
  scene.bus.on('*', (event) => void lines.push(serializeEnvelope(event).text));
  const bet = defineTool({
    name: 'bet',
    description: 'Put coins in the pot.',
    parameters: { type: 'object', properties: { coins: { type: 'integer', minimum: 1 } }, required: ['coins'] },
    execute: ({ coins }, { agent }) => scene.world.update('pot', (pot) => (pot as number) + (coins as number), { agent }),
  });
  const gambler = (p: Perception): string =>
    p.random() < 0.4 ? `<ACTION><say><text>I pass</text></say></ACTION>` : `<ACTION><bet><coins>${1 + Math.floor(p.random() * 5)}</coins></bet></ACTION>`;
  for (let index = 0; index < 12; index++) scene.add({ name: `g${index}`, tools: [bet], brain: gambler });
  return scene.run({ ticks: 8 }).then(() => lines);
}

describe('a scene lets the event loop in', () => {
  it('in the middle of a tick of scripted turns, when its slice is spent: a stop there ends the tick early', async () => {
    const scene = walkers(200, 0);
    await scene.start();
    const stepping = scene.step();
    // Runs only once the scene lets the event loop in.
    setImmediate(() => void scene.stop('interrupted'));
    const report = await stepping;
    expect(report.turns).toBeGreaterThan(0);
    expect(report.turns).toBeLessThan(200);
  });

  it('never, with yieldEveryMs: Infinity: the whole tick runs before anything else', async () => {
    const scene = walkers(200, Number.POSITIVE_INFINITY);
    await scene.start();
    const stepping = scene.step();
    setImmediate(() => void scene.stop('interrupted'));
    expect((await stepping).turns).toBe(200);
  });

  it('between ticks too: a run of short ticks can be stopped from a timer', async () => {
    const scene = walkers(1, 0);
    setImmediate(() => void scene.stop('interrupted'));
    const result = await scene.run({ ticks: 1_000_000 });
    expect(result.detail).toBe('interrupted');
    expect(result.tick).toBeLessThan(1_000_000);
  });

  it('without changing what happens: the same events whether it pauses at every chance or never', async () => {
    const always = await market(0);
    const never = await market(Number.POSITIVE_INFINITY);
    expect(always.length).toBeGreaterThan(300);
    expect(always).toEqual(never);
  });

  it('refuses a yieldEveryMs that is negative or not a number', () => {
    expect(() => createScene({ name: 'x', yieldEveryMs: -1 })).toThrow(ConfigError);
    expect(() => createScene({ name: 'x', yieldEveryMs: Number.NaN })).toThrow(/yieldEveryMs must be a number ≥ 0/);
  });
});
