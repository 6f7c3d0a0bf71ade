import { describe, expect, it } from 'vitest';
import type { Perception } from '../../src/index.js';
import { act, noteTool, ofType, recordedScene } from './helpers.js';

const quiet = (): string => 'Nothing to do.';

describe('scheduling', () => {
  it('trigger policy: start, speech addressed to an agent, scene events and timers wake agents; the scene ends quiet', async () => {
    const { scene, events } = recordedScene();
    const seen: string[] = [];
    const log = (perception: Perception): string => {
      seen.push(`${perception.tick}:${perception.agent}:${perception.trigger.reason}`);
      return 'ok';
    };
    scene.add({ name: 'caller', brain: () => act('say', { text: 'Hello, clerk', to: 'clerk' }), triggers: ['start'] });
    scene.add({ name: 'clerk', brain: log, triggers: ['addressed'] });
    scene.add({ name: 'watch', brain: log, triggers: [{ on: 'scene.event', where: (event) => (event as { data: { name: string } }).data.name === 'bell' }] });
    scene.add({ name: 'crier', brain: log, triggers: [{ every: 2, offset: 1 }] });

    await scene.start();
    scene.emit('bell');
    scene.emit('noise');
    await scene.step(); // tick 1: caller (start), watch (bell), crier (offset 1)
    await scene.step(); // tick 2: clerk heard the caller at tick 1
    await scene.step(); // tick 3: crier again
    expect(seen).toEqual(['1:watch:event', '1:crier:timer', '2:clerk:message', '3:crier:timer']);
    const triggered = ofType(events, 'agent.triggered');
    expect(triggered.find((event) => event.agent === 'clerk')!.data).toEqual({ reason: 'message', detail: 'caller spoke to you', tick: 2 });
    // The clerk's turn follows from the speech that woke it.
    const said = ofType(events, 'agent.said').find((event) => event.agent === 'caller')!;
    expect(triggered.find((event) => event.agent === 'clerk')!.cause).toBe(said.id);
    await scene.stop();
  });

  it('ends with reason quiet when nothing is pending and no timer is set', async () => {
    const { scene, types } = recordedScene();
    scene.add({ name: 'a', brain: quiet });
    const result = await scene.run({ ticks: 50 });
    expect(result).toMatchObject({ reason: 'quiet', tick: 1, turns: 1, failures: 0 });
    expect(types().at(-1)).toBe('scene.stopped');
  });

  it('round-robin gives one agent a turn per tick, in cast order, skipping none', async () => {
    const { scene } = recordedScene({ schedule: 'round-robin' });
    const order: string[] = [];
    for (const name of ['north', 'east', 'south']) scene.add({ name, brain: (p) => (order.push(`${p.tick}${p.agent[0]}`), 'pass'), triggers: [] });
    const result = await scene.run({ ticks: 7 });
    expect(order).toEqual(['1n', '2e', '3s', '4n', '5e', '6s', '7n']);
    expect(result).toMatchObject({ reason: 'ticks', turns: 7 });
  });

  it('every-tick runs every agent each tick, and thinkEvery limits how often one thinks', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick' });
    const { tool, calls } = noteTool();
    scene.add({ name: 'fast', tools: [tool], brain: (p) => act('note', { text: `t${p.tick}` }) });
    scene.add({ name: 'slow', tools: [tool], brain: (p) => act('note', { text: `t${p.tick}` }), thinkEvery: 3 });
    await scene.run({ ticks: 7 });
    expect(calls.filter((call) => call.startsWith('fast'))).toHaveLength(7);
    expect(calls.filter((call) => call.startsWith('slow'))).toEqual(['slow:t1', 'slow:t4', 'slow:t7']);
  });

  it('thinkEvery holds a triggered agent until its next allowed tick, keeping the trigger', async () => {
    const { scene } = recordedScene();
    const ticks: number[] = [];
    scene.add({ name: 'talker', brain: () => act('say', { text: 'psst', to: 'sleeper' }), triggers: [{ every: 1 }] });
    scene.add({ name: 'sleeper', brain: (p) => (ticks.push(p.tick), 'zzz'), thinkEvery: 4, triggers: ['addressed'] });
    await scene.run({ ticks: 9 });
    expect(ticks).toEqual([2, 6]);
  });

  it('an agent added while the scene runs takes part from the next tick', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick' });
    const ticks: string[] = [];
    scene.add({ name: 'first', brain: (p) => (ticks.push(`first${p.tick}`), 'ok') });
    await scene.step();
    scene.add({ name: 'late', brain: (p) => (ticks.push(`late${p.tick}`), 'ok') });
    await scene.step();
    expect(ticks).toEqual(['first1', 'first2', 'late2']);
    await scene.stop();
  });

  it('a brain that returns null passes its turn quietly: no speech, no correction', async () => {
    const { scene, types, events } = recordedScene({ schedule: 'every-tick' });
    scene.add({ name: 'idle', brain: () => null, maxCorrections: 1 });
    await scene.run({ ticks: 3 });
    expect(types()).not.toContain('agent.said');
    expect(types()).not.toContain('agent.observation');
    expect(types()).not.toContain('action.malformed');
    expect(events.filter((event) => event.type === 'agent.finished').map((event) => (event.data as { reason: string }).reason)).toEqual([
      'final_answer',
      'final_answer',
      'final_answer',
    ]);
  });

  it('retire takes an agent out: no more turns, while the others go on', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick' });
    const ticks: string[] = [];
    scene.add({ name: 'leaver', brain: (p) => (ticks.push(`leaver${p.tick}`), 'bye') });
    scene.add({ name: 'stayer', brain: (p) => (ticks.push(`stayer${p.tick}`), 'hi') });
    await scene.step();
    expect(scene.retire('leaver')).toBe(true);
    expect(scene.retire('leaver')).toBe(false);
    expect(scene.retire('nobody')).toBe(false);
    const result = await scene.run({ ticks: 2 });
    expect(ticks).toEqual(['leaver1', 'stayer1', 'stayer2', 'stayer3']);
    expect(scene.agents.get('leaver')!.retired).toBe(true);
    expect(result.wallMs).toBeGreaterThanOrEqual(0);
  });

  it('refuses bad configuration with errors that name the problem', () => {
    const { scene } = recordedScene();
    scene.add({ name: 'a', brain: quiet });
    expect(() => scene.add({ name: 'a', brain: quiet })).toThrow(/already an agent named "a"/);
    expect(() => scene.add({ name: 'b' })).toThrow(/exactly one of `provider`/);
    expect(() => scene.add({ name: 'c', brain: quiet, thinkEvery: 0 })).toThrow(/thinkEvery must be a positive integer/);
    expect(() => scene.add({ name: 'd', brain: quiet, triggers: ['sometimes' as never] })).toThrow(/unknown trigger "sometimes"/);
    expect(() => scene.add({ name: 'bad name!', brain: quiet })).toThrow(/agent name/);
    expect(() => recordedScene({ schedule: 'random' as never })).toThrow(/schedule must be/);
    expect(() => recordedScene({ clock: { mode: 'accelerated', speed: 0 } })).toThrow(/clock.speed/);
    expect(() => recordedScene({ withoutTools: ['fly'] })).toThrow(/not a built-in tool/);
  });

  it('steps and runs no more once stopped', async () => {
    const { scene } = recordedScene();
    scene.add({ name: 'a', brain: quiet });
    const first = await scene.stop('closing time');
    expect(first).toMatchObject({ reason: 'stopped', detail: 'closing time' });
    expect(await scene.stop()).toBe(first);
    await expect(scene.step()).rejects.toThrow(/has stopped/);
    await expect(scene.run()).rejects.toThrow(/has stopped/);
    expect(() => scene.add({ name: 'b', brain: quiet })).toThrow(/has stopped/);
  });
});
