import { describe, expect, it } from 'vitest';
import { WorldError, defineTool } from '../../src/index.js';
import { act, ofType, recordedScene } from './helpers.js';

describe('the world state', () => {
  it('reads frozen copies and reports each change as world.changed', () => {
    const { scene, events } = recordedScene({ world: { tavern: { stock: { ale: 3 } } } });
    const stock = scene.world.get('tavern.stock') as { ale: number };
    expect(stock).toEqual({ ale: 3 });
    expect(Object.isFrozen(stock)).toBe(true);
    expect(() => {
      (stock as { ale: number }).ale = 99;
    }).toThrow(TypeError);

    scene.world.set('tavern.stock.bread', 2, { agent: 'innkeeper' });
    scene.world.set(['tavern', 'notice.board'], 'closed on Sunday');
    expect(scene.world.delete('tavern.stock.ale')).toBe(true);
    expect(scene.world.delete('tavern.stock.ale')).toBe(false);

    expect(scene.world.snapshot()).toEqual({ tavern: { stock: { bread: 2 }, 'notice.board': 'closed on Sunday' } });
    expect(ofType(events, 'world.changed').map((event) => [event.data.path, event.data.value, event.agent])).toEqual([
      ['tavern.stock.bread', 2, 'innkeeper'],
      ['tavern.notice.board', 'closed on Sunday', undefined],
      ['tavern.stock.ale', undefined, undefined],
    ]);
    // A value read earlier is a copy: later writes never change it.
    expect(stock).toEqual({ ale: 3 });
  });

  it('refuses paths that reach a prototype and values that are not JSON, naming where', () => {
    const { scene } = recordedScene();
    for (const path of ['__proto__.polluted', 'a.constructor.prototype', 'a..b']) {
      expect(() => scene.world.set(path, 1)).toThrow(WorldError);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bad: [unknown, RegExp][] = [
      [() => 1, /function/],
      [Number.NaN, /NaN/],
      [10n, /bigint/],
      [new Date(0), /Date/],
      [{ when: undefined }, /when is a undefined/],
      [cyclic, /deeper than 64|circular/],
    ];
    for (const [value, message] of bad) expect(() => scene.world.set('x', value as never)).toThrow(message);
    expect(scene.world.get('x')).toBeUndefined();
  });

  it('serializes concurrent updates of one path: world.changed in commit order, replay equals the final state', async () => {
    const { scene, events } = recordedScene({ world: { counter: 0, other: 0 } });
    const updates = Array.from({ length: 25 }, (_, index) =>
      scene.world.update('counter', async (value) => {
        // Yield inside the critical section: without the lock, increments would be lost.
        await new Promise((resolve) => setTimeout(resolve, index % 3));
        return (value as number) + 1;
      }),
    );
    // A disjoint path does not wait for the counter.
    const other = scene.world.update('other', (value) => (value as number) + 10);
    await Promise.all([...updates, other]);

    expect(scene.world.get('counter')).toBe(25);
    const changes = ofType(events, 'world.changed').filter((event) => event.data.path === 'counter');
    expect(changes.map((event) => event.data.value)).toEqual(Array.from({ length: 25 }, (_, index) => index + 1));
    const replayed: Record<string, unknown> = { counter: 0, other: 0 };
    for (const event of ofType(events, 'world.changed')) replayed[event.data.path] = event.data.value;
    expect(replayed).toEqual(scene.world.snapshot());
  });

  it('refuses a plain write to a path an update holds, and lets a waiting update give up on abort', async () => {
    const { scene } = recordedScene({ world: { stock: { ale: 1 } } });
    let release!: () => void;
    const holding = scene.world.update('stock', () => new Promise<number>((resolve) => (release = () => resolve(5))));
    await Promise.resolve();
    expect(() => scene.world.set('stock.ale', 0)).toThrow(/while an update holds it/);
    scene.world.set('elsewhere', 1);
    const controller = new AbortController();
    const waiting = scene.world.update('stock.ale', () => 7, { signal: controller.signal });
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    release();
    await holding;
    expect(scene.world.get('stock')).toBe(5);
  });

  it('refuses a nested update of an overlapping path instead of waiting forever; disjoint nesting works', async () => {
    const { scene } = recordedScene({ world: { tavern: { stock: 1, till: 0 } } });
    const nested = scene.world.update('tavern', async () => {
      await scene.world.update('tavern.stock', (stock) => (stock as number) - 1);
      return undefined;
    });
    await expect(nested).rejects.toThrow(/inside an update of "tavern" would wait for itself/);
    await scene.world.update('tavern.stock', async (stock) => {
      await scene.world.update('tavern.till', (till) => (till as number) + 3);
      return (stock as number) - 1;
    });
    expect(scene.world.get('tavern')).toEqual({ stock: 0, till: 3 });
  });

  it('changes only through tools when agents act: the tool result and the change are on the bus', async () => {
    const { scene, events } = recordedScene({ world: { keg: 2 } });
    const pour = defineTool({
      name: 'pour',
      description: 'Pour one ale from the keg.',
      parameters: { type: 'object', properties: {} },
      execute: (_args, { agent }) =>
        scene.world.update(
          'keg',
          (keg) => {
            if ((keg as number) <= 0) throw new Error('the keg is empty');
            return (keg as number) - 1;
          },
          { agent },
        ),
    });
    scene.add({ name: 'innkeeper', tools: [pour], brain: () => act('pour'), triggers: [{ every: 1 }] });
    const result = await scene.run({ ticks: 3 });

    expect(result.reason).toBe('ticks');
    expect(scene.world.get('keg')).toBe(0);
    expect(ofType(events, 'world.changed').map((event) => [event.data.value, event.agent, event.data.tick])).toEqual([
      [1, 'innkeeper', 1],
      [0, 'innkeeper', 2],
    ]);
    const failed = ofType(events, 'tool.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data.error.message).toContain('the keg is empty');
  });
});
