import { describe, expect, it } from 'vitest';
import { createScene, defineTool } from '../../src/index.js';
import { createEventHistory } from '../../src/inspect/index.js';
import { inspect, openEvents, pageHeaders, send, troupeFrames } from './helpers.js';

/** A scene whose greeter speaks once and whose sweeper sweeps every tick, run `ticks` ticks, with a small history. */
async function evening(ticks: number, size: number) {
  const scene = createScene({ name: 'late', seed: 1, clock: { mode: 'stepped' } });
  const history = createEventHistory(scene.bus, { size });
  const sweep = defineTool({ name: 'sweep', description: 'Sweep.', parameters: { type: 'object', properties: {} }, execute: () => 'swept' });
  scene.add({ name: 'greeter', brain: () => 'Welcome!', triggers: ['start'] });
  scene.add({ name: 'sweeper', tools: [sweep], brain: () => '<ACTION><sweep></sweep></ACTION>', triggers: [{ every: 1 }] });
  await scene.run({ ticks });
  return { scene, history };
}

describe('an event history that evicts', () => {
  it('counts what it let go, and keeps each agent as those events left it', async () => {
    const { history } = await evening(10, 20);
    expect(history.evicted).toBe(history.total - 20);
    const earlier = new Map(history.earlier().map((agent) => [agent.name, agent]));
    expect(earlier.get('greeter')).toMatchObject({ turns: 1, lastSaid: 'Welcome!', lastReason: 'final_answer', state: 'done', trigger: 'start', calls: 0 });
    // Every event seen, evicted or held: the sweeper's ten turns and ten calls.
    const all = new Map(history.agents().map((agent) => [agent.name, agent]));
    expect(all.get('sweeper')).toMatchObject({ turns: 10, calls: 10, failures: 0, corrections: 0, lastReason: 'turn_ended' });
    expect(earlier.get('sweeper')!.turns).toBeLessThan(10);
  });

  it('evicts nothing while it holds the whole run', async () => {
    const { history } = await evening(2, 10_000);
    expect(history.evicted).toBe(0);
    expect(history.earlier()).toEqual([]);
  });
});

describe('a stream opened late', () => {
  it('starts with a gap: how many events are gone, how many are kept, and each agent as they left it', async () => {
    const { scene, history } = await evening(10, 20);
    const inspector = await inspect({ scene, history });
    const stream = await openEvents(inspector.port);
    await stream.until((frames) => troupeFrames(frames).length === 20);
    const gap = stream.frames.find((frame) => frame.event === 'gap')!;
    const data = JSON.parse(gap.data) as { missed: number; reason: string; kept: number; earlier: { name: string; turns: number }[] };
    expect(data).toMatchObject({ missed: history.evicted, reason: 'history', kept: 20 });
    expect(data.earlier.find((agent) => agent.name === 'greeter')).toMatchObject({ turns: 1, lastSaid: 'Welcome!' });
    // The gap comes before the first event.
    expect(stream.frames.findIndex((frame) => frame.event === 'gap')).toBeLessThan(stream.frames.findIndex((frame) => frame.event === 'troupe'));
    stream.close();
  });

  it('/state gives each agent its turns and last reason, from the scene itself', async () => {
    const { scene, history } = await evening(10, 20);
    const inspector = await inspect({ scene, history });
    const reply = await send(inspector.port, { path: '/state', headers: pageHeaders(inspector.port) });
    expect(JSON.parse(reply.text).agents).toEqual([
      { name: 'greeter', state: 'done', turns: 1, lastReason: 'final_answer' },
      { name: 'sweeper', state: 'done', turns: 10, lastReason: 'turn_ended' },
    ]);
  });

  it('/state of a bare bus counts every event seen, evicted or held', async () => {
    const { scene, history } = await evening(10, 20);
    const inspector = await inspect({ bus: scene.bus, history });
    const reply = await send(inspector.port, { path: '/state', headers: pageHeaders(inspector.port) });
    expect(JSON.parse(reply.text).agents).toEqual([
      { name: 'greeter', state: 'done', turns: 1, lastReason: 'final_answer' },
      { name: 'sweeper', state: 'done', turns: 10, lastReason: 'turn_ended' },
    ]);
  });
});
