import { describe, expect, it } from 'vitest';
import { defineTool, scriptedProvider } from '../../src/index.js';
import { act, noteTool, ofType, recordedScene } from './helpers.js';

describe('failures and stopping', () => {
  it("one agent's failure ends only its turn: the others go on, and it gets its next turn", async () => {
    const { scene, events } = recordedScene({ schedule: 'every-tick' });
    const { tool, calls } = noteTool();
    let thrown = 0;
    scene.add({
      name: 'broken',
      brain: (p) => {
        if (p.tick === 2) {
          thrown++;
          throw new Error('brain fault');
        }
        return act('note', { text: `b${p.tick}` });
      },
      tools: [tool],
    });
    scene.add({ name: 'steady', tools: [tool], brain: (p) => act('note', { text: `s${p.tick}` }) });
    const result = await scene.run({ ticks: 3 });

    expect(thrown).toBe(1);
    expect(calls).toEqual(['broken:b1', 'steady:s1', 'steady:s2', 'broken:b3', 'steady:s3']);
    const finished = ofType(events, 'agent.finished').filter((event) => event.agent === 'broken');
    expect(finished.map((event) => event.data.reason)).toEqual(['turn_ended', 'error', 'turn_ended']);
    expect(finished[1]!.data.error).toContain('brain fault');
    expect(result).toMatchObject({ reason: 'ticks', turns: 6, failures: 1 });
    expect(scene.agents.get('broken')!.lastReason).toBe('turn_ended');
  });

  it('stop aborts every tool in flight, waits for the turns to settle, then publishes scene.stopped', async () => {
    const { scene, events, types } = recordedScene({ schedule: 'every-tick' });
    const signals: AbortSignal[] = [];
    const wait = defineTool({
      name: 'wait_forever',
      description: 'Waits until aborted.',
      parameters: { type: 'object', properties: {} },
      timeoutMs: 0,
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          signals.push(signal);
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
    });
    for (const name of ['a', 'b', 'c']) scene.add({ name, tools: [wait], brain: () => act('wait_forever') });
    const stepping = scene.step();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(signals).toHaveLength(3);
    const result = await scene.stop('closing time');
    await stepping;

    expect(signals.every((signal) => signal.aborted)).toBe(true);
    expect(result).toMatchObject({ reason: 'stopped', detail: 'closing time', turns: 3 });
    const finished = ofType(events, 'agent.finished');
    expect(finished.map((event) => event.data.reason)).toEqual(['aborted', 'aborted', 'aborted']);
    // scene.stopped comes after every agent has finished.
    expect(types().lastIndexOf('agent.finished')).toBeLessThan(types().indexOf('scene.stopped'));
    expect(ofType(events, 'tool.failed').map((event) => event.data.error.kind)).toEqual(['aborted', 'aborted', 'aborted']);
  });

  it('stop gives up waiting after stopTimeoutMs for a tool that ignores its signal, and still stops', async () => {
    const { scene, events } = recordedScene({ stopTimeoutMs: 20 });
    const deaf = defineTool({
      name: 'deaf',
      description: 'Never listens.',
      parameters: { type: 'object', properties: {} },
      timeoutMs: 0,
      execute: () => new Promise(() => {}),
    });
    scene.add({ name: 'stubborn', tools: [deaf], brain: () => act('deaf') });
    void scene.step();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const result = await scene.stop();
    expect(result.reason).toBe('stopped');
    expect(ofType(events, 'scene.stopped')).toHaveLength(1);
    // The dispatcher fails the call at once on abort, so even this turn ended.
    expect(ofType(events, 'agent.finished').map((event) => event.data.reason)).toEqual(['aborted']);
  });

  it('run ends with reason signal when its signal aborts', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick' });
    const controller = new AbortController();
    scene.add({ name: 'a', brain: (p) => (p.tick === 3 && controller.abort(), 'ok') });
    const result = await scene.run({ ticks: 100, signal: controller.signal });
    expect(result.reason).toBe('signal');
    expect(result.tick).toBe(3);
  });

  it('a model agent whose provider fails ends its turn with error; a brain beside it is unaffected', async () => {
    const { scene } = recordedScene({ schedule: 'every-tick' });
    const failing = scriptedProvider([{ error: { kind: 'auth', message: 'bad key' } }]);
    scene.add({ name: 'model', provider: failing });
    scene.add({ name: 'brain', brain: () => 'fine' });
    const report = await scene.step();
    expect(report.outcomes).toEqual({ error: 1, final_answer: 1 });
    await scene.stop();
  });
});
