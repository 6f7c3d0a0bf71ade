import { describe, expect, it } from 'vitest';
import { ConfigError, createBus, createScene, type Envelope } from '../../src/index.js';
import { sequentialIds } from '../../src/testing/index.js';
import { createEventHistory, createTickGate } from '../../src/inspect/index.js';

const ids = (events: Envelope[]) => events.map((event) => event.id);

describe('event history', () => {
  it('holds the last `size` events of a bus, in order, and finds what came after an id', () => {
    const bus = createBus({ ids: sequentialIds('e') });
    const history = createEventHistory(bus, { size: 3 });
    for (let n = 1; n <= 5; n++) bus.publish('scene.tick', { tick: n });
    expect([history.length, history.total, history.capacity, history.live]).toEqual([3, 5, 3, true]);
    expect(ids(history.events())).toEqual(['e-3', 'e-4', 'e-5']);
    expect(history.after('e-3')).toEqual({ events: [expect.objectContaining({ id: 'e-4' }), expect.objectContaining({ id: 'e-5' })], found: true, missed: null });
    expect(ids(history.after('e-5').events)).toEqual([]);
    expect(history.after('e-1')).toMatchObject({ found: false, missed: 1 });
    expect(history.after('elsewhere-1')).toMatchObject({ found: false, missed: null });
    expect(ids(history.after(undefined).events)).toEqual(['e-3', 'e-4', 'e-5']);
  });

  it('keeps order across many wraps of the ring', () => {
    const bus = createBus({ ids: sequentialIds('e') });
    const history = createEventHistory(bus, { size: 1_000 });
    for (let n = 1; n <= 12_345; n++) bus.publish('scene.tick', { tick: n });
    expect(ids(history.events())).toEqual(Array.from({ length: 1_000 }, (_, index) => `e-${11_346 + index}`));
    expect(ids(history.after('e-12340').events)).toEqual(['e-12341', 'e-12342', 'e-12343', 'e-12344', 'e-12345']);
  });

  it('tells subscribers of each event once it is held; detach stops recording', () => {
    const bus = createBus({ ids: sequentialIds('e') });
    const history = createEventHistory(bus);
    const told: [string, number][] = [];
    const stop = history.subscribe((event) => void told.push([event.id, history.total]));
    bus.publish('scene.tick', { tick: 1 });
    stop();
    bus.publish('scene.tick', { tick: 2 });
    history.detach();
    bus.publish('scene.tick', { tick: 3 });
    expect(told).toEqual([['e-1', 1]]);
    expect([ids(history.events()), history.live]).toEqual([['e-1', 'e-2'], false]);
  });

  it('holds every event of a log', () => {
    const events = Array.from({ length: 20_000 }, (_, index) => ({ id: `l-${index}`, type: 'scene.tick', at: index, data: { tick: index } }) as Envelope);
    const history = createEventHistory(events);
    expect([history.length, history.live]).toEqual([20_000, false]);
    expect(ids(history.after('l-19998').events)).toEqual(['l-19999']);
  });

  it('resumes a log that repeats an id from its latest position', () => {
    const events = ['l-1', 'l-2', 'l-1', 'l-3'].map((id, index) => ({ id, type: 'scene.tick', at: index, data: { tick: index } }) as Envelope);
    const history = createEventHistory(events);
    expect(history.after('l-1').events.map((event) => event.data)).toEqual([{ tick: 3 }]);
    expect(history.after('l-2').events.map((event) => event.data)).toEqual([{ tick: 2 }, { tick: 3 }]);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => createEventHistory(createBus(), { size: 0 })).toThrow(ConfigError);
  });
});

describe('tick gate', () => {
  it('lets a stepped run go until paused; steps count; resume lets it finish', async () => {
    const scene = createScene({ name: 'gated', seed: 1, schedule: 'every-tick' });
    scene.add({ name: 'clock', brain: (perception) => `tock ${perception.tick}` });
    const gate = createTickGate(scene);
    const ticks: number[] = [];
    scene.bus.on('scene.tick', (event) => {
      ticks.push(event.data.tick);
      if (event.data.tick === 2) gate.pause();
    });
    const running = scene.run({ ticks: 6, beforeTick: gate.beforeTick });
    expect(await gate.held()).toBe(3);
    expect(gate.step()).toBe(true);
    expect(gate.step()).toBe(true); // a second credit: tick 4 runs too
    expect(await gate.held()).toBe(5);
    expect(ticks).toEqual([1, 2, 3, 4]);
    expect(gate.pause()).toBe(false);
    expect(gate.resume()).toBe(true);
    expect((await running).tick).toBe(6);
    expect(gate.holding).toBeUndefined();
  });

  it('release opens it for good, without an event', async () => {
    const scene = createScene({ name: 'gated', seed: 1, schedule: 'every-tick' });
    scene.add({ name: 'clock', brain: (perception) => `tock ${perception.tick}` });
    const gate = createTickGate(scene, { paused: true });
    const events: string[] = [];
    scene.bus.on('inspector.paused', (event) => void events.push(String(event.data.paused)));
    const running = scene.run({ ticks: 2, beforeTick: gate.beforeTick });
    await gate.held();
    gate.release();
    expect((await running).tick).toBe(2);
    expect([gate.paused, gate.pause(), events]).toEqual([false, false, []]);
  });
});
