import { describe, expect, it } from 'vitest';
import { createScene, createTickGate, defineTool, type Envelope, type Scene } from '../../src/index.js';
import { recordEvents, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { control, inspect, pageHeaders, send } from './helpers.js';

/** A tool that waits for a person's approval and notes each real execution. */
function paymentTool() {
  const executed: string[] = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pay someone.',
    parameters: { type: 'object', properties: { to: { type: 'string', maxLength: 16 }, amount: { type: 'integer', minimum: 1 } }, required: ['to', 'amount'], additionalProperties: false },
    needsApproval: true,
    execute: ({ to, amount }) => {
      executed.push(`${String(to)}:${String(amount)}`);
      return 'paid';
    },
  });
  return { pay, executed };
}

const PAY_ANA = '<ACTION><pay><to>ana</to><amount>5</amount></pay></ACTION>';

async function state(port: number) {
  const reply = await send(port, { path: '/state', headers: pageHeaders(port) });
  expect(reply.status).toBe(200);
  return JSON.parse(reply.text) as Record<string, unknown>;
}

/** A stepped scene whose one agent speaks every tick. */
function clockScene(): Scene {
  const scene = createScene({ name: 'clock', seed: 1, schedule: 'every-tick' });
  scene.add({ name: 'clock', brain: (perception) => `tock ${perception.tick}` });
  return scene;
}

describe('POST /control: approve and deny', () => {
  it('approve runs the call a real agent is waiting on, once', async () => {
    const { pay, executed } = paymentTool();
    const { agent, events } = testAgent({ provider: scriptedProvider([PAY_ANA, 'Paid.']), tools: [pay] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent] });
    const asked = new Promise<Envelope<'tool.approval.requested'>>((resolve) => agent.bus.once('tool.approval.requested', resolve));
    const running = agent.run('Pay Ana 5.');
    const { data } = await asked;
    expect(await state(inspector.port)).toMatchObject({ mode: 'live', scene: null, clock: null, canControl: true, agents: [{ name: 'tester', state: 'awaitingApproval' }] });
    expect(executed).toEqual([]);

    expect(await control(inspector.port, { type: 'approve', agent: 'tester', callId: data.callId })).toEqual({ status: 200, body: { ok: true } });
    expect((await running).reason).toBe('final_answer');
    expect(executed).toEqual(['ana:5']);
    expect(events.find('tool.approval.resolved')?.data).toMatchObject({ callId: data.callId, approved: true });
    const again = await control(inspector.port, { type: 'approve', agent: 'tester', callId: data.callId });
    expect(again).toEqual({ status: 409, body: { error: expect.stringContaining('is waiting for approval (already decided, aborted, or never asked)') } });
    expect(executed).toEqual(['ana:5']);
  });

  it('deny refuses it with the reason; nothing runs', async () => {
    const { pay, executed } = paymentTool();
    const { agent, events } = testAgent({ provider: scriptedProvider([PAY_ANA, 'Understood.']), tools: [pay] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent] });
    const asked = new Promise<Envelope<'tool.approval.requested'>>((resolve) => agent.bus.once('tool.approval.requested', resolve));
    const running = agent.run('Pay Ana 5.');
    const { data } = await asked;
    expect(await control(inspector.port, { type: 'deny', agent: 'tester', callId: data.callId, reason: 'not today' })).toEqual({ status: 200, body: { ok: true } });
    await running;
    expect(executed).toEqual([]);
    expect(events.find('tool.rejected')?.data).toMatchObject({ code: 'denied', message: 'not today' });
  });

  it('approves the call of a scene agent, which lets the tick finish', async () => {
    const { pay, executed } = paymentTool();
    const scene = createScene({ name: 'bank', seed: 1 });
    scene.add({ name: 'banker', tools: [pay], brain: () => PAY_ANA, triggers: ['start'] });
    const inspector = await inspect({ scene });
    const asked = new Promise<Envelope<'tool.approval.requested'>>((resolve) => scene.bus.once('tool.approval.requested', resolve));
    const running = scene.run({ ticks: 1 });
    const { data, agent } = await asked;
    expect(agent).toBe('banker');
    expect(await control(inspector.port, { type: 'approve', agent: 'nobody', callId: data.callId })).toEqual({ status: 404, body: { error: 'no agent named "nobody"' } });
    expect(await control(inspector.port, { type: 'approve', agent: 'banker', callId: data.callId })).toEqual({ status: 200, body: { ok: true } });
    expect((await running).tick).toBe(1);
    expect(executed).toEqual(['ana:5']);
  });
});

describe('POST /control: pause, step, resume', () => {
  it('holds a stepped scene between ticks, steps it one tick at a time, and lets it go', async () => {
    const scene = clockScene();
    const paused = recordEvents(scene.bus, 'inspector.paused');
    const gate = createTickGate(scene);
    const inspector = await inspect({ scene, gate });
    const { port } = inspector;
    expect(await control(port, { type: 'step' })).toEqual({ status: 409, body: { error: 'step works while paused: pause first' } });

    expect(await control(port, { type: 'pause' })).toEqual({ status: 200, body: { ok: true } });
    const running = scene.run({ ticks: 3, beforeTick: gate.beforeTick });
    expect(await gate.held()).toBe(1);
    expect(await state(port)).toMatchObject({ mode: 'live', scene: 'clock', clock: 'stepped', paused: true, started: true, stopped: false, canControl: true, tick: 0, agents: [{ name: 'clock', state: 'idle' }] });

    expect(await control(port, { type: 'step' })).toEqual({ status: 200, body: { ok: true } });
    expect(await gate.held()).toBe(2);
    expect(await state(port)).toMatchObject({ paused: true, tick: 1 });

    expect(await control(port, { type: 'resume' })).toEqual({ status: 200, body: { ok: true } });
    const result = await running;
    expect([result.reason, result.tick]).toEqual(['ticks', 3]);
    expect(paused.all.map((event) => event.data)).toEqual([
      { paused: true, tick: 0 },
      { paused: false, tick: 1 },
    ]);
    expect(await control(port, { type: 'pause' })).toEqual({ status: 409, body: { error: 'the scene has stopped at tick 3' } });
  });

  it('a scene stopped while paused ends its run', async () => {
    const scene = clockScene();
    const gate = createTickGate(scene, { paused: true });
    const running = scene.run({ ticks: 5, beforeTick: gate.beforeTick });
    expect(await gate.held()).toBe(1);
    await scene.stop('interrupted');
    expect(await running).toMatchObject({ reason: 'stopped', tick: 0 });
  });

  it('refuses pause without a tick gate, or on a scene that is not stepped', async () => {
    const plain = await inspect({ scene: clockScene() });
    expect(await control(plain.port, { type: 'pause' })).toEqual({ status: 409, body: { error: "pause needs a scene run under the inspector's tick gate (troupe run --inspect)" } });
    const real = createScene({ name: 'wall', seed: 1, clock: { mode: 'real', tickMs: 1_000 } });
    const timed = await inspect({ scene: real, gate: createTickGate(real) });
    expect(await control(timed.port, { type: 'pause' })).toEqual({ status: 409, body: { error: 'pause works for stepped scenes; this one runs on a real clock' } });
    expect(await state(timed.port)).toMatchObject({ clock: 'real', paused: false });
  });
});
