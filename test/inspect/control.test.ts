import { describe, expect, it } from 'vitest';
import { createScene, defineTool, type Envelope, type Scene } from '../../src/index.js';
import { createTickGate } from '../../src/inspect/index.js';
import { recordEvents, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { control, inspect, openEvents, pageHeaders, send, type SseStream } from './helpers.js';

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

/** The first streamed event of a type, as the page receives it. */
async function streamed(stream: SseStream, type: string) {
  await stream.until(() => stream.events().some((event) => event.type === type));
  return stream.events().find((event) => event.type === type)!;
}

/** The card the page makes of a streamed approval request, and what its Approve button posts. */
async function pageApproval(event: ReturnType<SseStream['events']>[number]) {
  // The page is plain checked JavaScript without declarations: import it by URL.
  const model = (await import(new URL('../../src/inspect/page/model.js', import.meta.url).href)) as {
    createModel: (snapshot: unknown) => { approvals: Map<string, Record<string, unknown>> };
    applyEvent: (model: unknown, event: unknown) => void;
  };
  const view = (await import(new URL('../../src/inspect/page/render-approvals.js', import.meta.url).href)) as { approveCommand: (approval: unknown) => unknown };
  const state = model.createModel({ mode: 'live', canControl: true, agents: [] });
  model.applyEvent(state, { ...event, at: 0 });
  const card = [...state.approvals.values()][0]!;
  return { card, command: view.approveCommand(card) };
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
    expect(again).toEqual({ status: 409, body: { error: expect.stringContaining('is waiting for approval with those arguments') } });
    expect(executed).toEqual(['ana:5']);
  });

  it('approve binds to the arguments the approver saw: other arguments are refused and nothing runs', async () => {
    const { pay, executed } = paymentTool();
    const { agent } = testAgent({ provider: scriptedProvider([PAY_ANA, 'Paid.']), tools: [pay] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent] });
    const asked = new Promise<Envelope<'tool.approval.requested'>>((resolve) => agent.bus.once('tool.approval.requested', resolve));
    const running = agent.run('Pay Ana 5.');
    const { data } = await asked;

    const forged = await control(inspector.port, { type: 'approve', agent: 'tester', callId: data.callId, args: { to: 'ana', amount: 500 } });
    expect(forged).toEqual({ status: 409, body: { error: expect.stringContaining('asked with other arguments') } });
    expect(await control(inspector.port, { type: 'approve', agent: 'tester', callId: data.callId, args: 'all of them' })).toEqual({
      status: 400,
      body: { error: expect.stringContaining('"args" must be the JSON object') },
    });
    expect(executed).toEqual([]);
    expect(agent.state).toBe('awaitingApproval');

    expect(await control(inspector.port, { type: 'approve', agent: 'tester', callId: data.callId, args: { amount: 5, to: 'ana' } })).toEqual({ status: 200, body: { ok: true } });
    expect((await running).reason).toBe('final_answer');
    expect(executed).toEqual(['ana:5']);
  });

  it('approves from the page a call whose arguments are larger than 64 KB (a model may send 256 KB)', async () => {
    const written: number[] = [];
    const write = defineTool({
      name: 'write_file', description: 'Write.', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      needsApproval: true, execute: ({ text }) => { written.push(String(text).length); return 'ok'; },
    });
    const text = 'x'.repeat(70_000);
    const { agent } = testAgent({ provider: scriptedProvider([`<ACTION><write_file><text>${text}</text></write_file></ACTION>`, 'Done.']), tools: [write] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent] });
    const asked = new Promise<Envelope<'tool.approval.requested'>>((resolve) => agent.bus.once('tool.approval.requested', resolve));
    const running = agent.run('Write it.');
    const { data } = await asked;
    // What the page sends: the args it showed.
    const reply = await control(inspector.port, { type: 'approve', agent: 'tester', callId: data.callId, args: data.args });
    agent.abort('test over');
    await running;
    await inspector.close();
    expect(reply.status).toBe(200);
  });

  it('a call too large to stream (a $truncated card) is approved only with the argsHash the page got', async () => {
    const written: number[] = [];
    const write = defineTool({
      name: 'write_file', description: 'Write.', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      needsApproval: true, execute: ({ text }) => { written.push(String(text).length); return 'ok'; },
    });
    const text = 'x'.repeat(20_000);
    const { agent } = testAgent({ provider: scriptedProvider([`<ACTION><write_file><text>${text}</text></write_file></ACTION>`, 'Done.']), tools: [write] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent], maxEventChars: 10_000 });
    const stream = await openEvents(inspector.port);
    const running = agent.run('Write it.');
    const shown = await streamed(stream, 'tool.approval.requested');
    const callId = shown.data.callId as string;
    expect(shown.data).toMatchObject({ $truncated: true, callId: expect.any(String), name: 'write_file', argsHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(shown.data.args).toBeUndefined();

    // Unbound, or bound to another hash: refused, nothing runs.
    expect(await control(inspector.port, { type: 'approve', agent: 'tester', callId })).toEqual({ status: 409, body: { error: expect.stringContaining('too large to show') } });
    expect(await control(inspector.port, { type: 'approve', agent: 'tester', callId, argsHash: '0'.repeat(64) })).toMatchObject({ status: 409 });
    expect(await control(inspector.port, { type: 'approve', agent: 'tester', callId, argsHash: 7 })).toMatchObject({ status: 400 });
    expect(written).toEqual([]);

    // What the page's Approve button sends for that card.
    const { card, command } = await pageApproval(shown);
    expect(card).toMatchObject({ truncated: { chars: expect.any(Number) }, argsHash: shown.data.argsHash });
    expect(command).toEqual({ type: 'approve', agent: 'tester', callId, argsHash: shown.data.argsHash });
    expect(await control(inspector.port, command)).toEqual({ status: 200, body: { ok: true } });
    expect((await running).reason).toBe('final_answer');
    expect(written).toEqual([20_000]);
    stream.close();
  });

  it('a result too large to stream is approved only with the outputHash the page got', async () => {
    const read = defineTool({
      name: 'read_file', description: 'Read.', parameters: { type: 'object', properties: {}, additionalProperties: false },
      needsResultApproval: true, execute: () => 'y'.repeat(20_000),
    });
    const provider = scriptedProvider(['<ACTION><read_file></read_file></ACTION>', 'Done.']);
    const { agent } = testAgent({ provider, tools: [read] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent], maxEventChars: 10_000 });
    const stream = await openEvents(inspector.port);
    const running = agent.run('Read it.');
    const shown = await streamed(stream, 'tool.result.approval.requested');
    const callId = shown.data.callId as string;
    expect(shown.data).toMatchObject({ $truncated: true, callId: expect.any(String), outputHash: expect.stringMatching(/^[0-9a-f]{64}$/) });

    expect(await control(inspector.port, { type: 'approveResult', agent: 'tester', callId })).toEqual({ status: 409, body: { error: expect.stringContaining('too large to show') } });
    expect(await control(inspector.port, { type: 'approveResult', agent: 'tester', callId, outputHash: '0'.repeat(64) })).toMatchObject({ status: 409 });
    expect(agent.state).toBe('awaitingResultApproval');

    const { command } = await pageApproval(shown);
    expect(command).toEqual({ type: 'approveResult', agent: 'tester', callId, outputHash: shown.data.outputHash });
    expect(await control(inspector.port, command)).toEqual({ status: 200, body: { ok: true } });
    expect((await running).reason).toBe('final_answer');
    expect(provider.requests[1]!.messages.at(-1)!.content).toContain('y'.repeat(100));
    stream.close();
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

/** A tool whose result waits for a person before the model sees it. */
function secretTool() {
  const read = defineTool({
    name: 'read_secret',
    description: 'Read the secret.',
    parameters: { type: 'object', properties: {} },
    needsResultApproval: true,
    execute: () => 'the vault code is 1234',
  });
  return { read };
}

describe('POST /control: approveResult and rejectResult', () => {
  it('approveResult lets a held result reach the model, once', async () => {
    const { read } = secretTool();
    const provider = scriptedProvider(['<ACTION><read_secret/></ACTION>', 'Read.']);
    const { agent, events } = testAgent({ provider, tools: [read] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent] });
    const asked = new Promise<Envelope<'tool.result.approval.requested'>>((resolve) => agent.bus.once('tool.result.approval.requested', resolve));
    const running = agent.run('Read it.');
    const { data } = await asked;
    expect(data.output).toBe('the vault code is 1234');
    expect(await state(inspector.port)).toMatchObject({ agents: [{ name: 'tester', state: 'awaitingResultApproval' }] });
    // A call approval is not a result approval: the wrong command is refused, nothing moves.
    expect((await control(inspector.port, { type: 'approve', agent: 'tester', callId: data.callId })).status).toBe(409);
    expect(await control(inspector.port, { type: 'approveResult', agent: 'tester', callId: data.callId })).toEqual({ status: 200, body: { ok: true } });
    expect((await running).reason).toBe('final_answer');
    expect(events.find('tool.result.approval.resolved')?.data).toMatchObject({ callId: data.callId, approved: true });
    expect(provider.requests[1]!.messages.at(-1)!.content).toMatch(/vault code is 1234/);
    const again = await control(inspector.port, { type: 'approveResult', agent: 'tester', callId: data.callId });
    expect(again).toEqual({ status: 409, body: { error: expect.stringContaining('is waiting for approval (already decided, aborted, or never held)') } });
  });

  it('rejectResult withholds it with the reason', async () => {
    const { read } = secretTool();
    const provider = scriptedProvider(['<ACTION><read_secret/></ACTION>', 'Understood.']);
    const { agent, events } = testAgent({ provider, tools: [read] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent] });
    const asked = new Promise<Envelope<'tool.result.approval.requested'>>((resolve) => agent.bus.once('tool.result.approval.requested', resolve));
    const running = agent.run('Read it.');
    const { data } = await asked;
    expect(await control(inspector.port, { type: 'rejectResult', agent: 'tester', callId: data.callId, reason: 'secret' })).toEqual({ status: 200, body: { ok: true } });
    await running;
    expect(events.find('tool.result.approval.resolved')?.data).toMatchObject({ approved: false, reason: 'secret' });
    const seen = provider.requests[1]!.messages.at(-1)!.content;
    expect(seen).toMatch(/RESULT_REJECTED: secret/);
    expect(seen).not.toMatch(/1234/);
  });

  it('checks the command like the others', async () => {
    const { read } = secretTool();
    const { agent } = testAgent({ provider: scriptedProvider([]), tools: [read] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent] });
    expect(await control(inspector.port, { type: 'rejectResult', agent: 'tester', callId: 'x', reason: 7 })).toEqual({
      status: 400,
      body: { error: '"reason" must be a string of at most 2000 characters' },
    });
    expect(await control(inspector.port, { type: 'approveResult', agent: 'tester' })).toMatchObject({ status: 400 });
    expect(await control(inspector.port, { type: 'approveResult', agent: 'nobody', callId: 'x' })).toEqual({ status: 404, body: { error: 'no agent named "nobody"' } });
    expect((await control(inspector.port, { type: 'rejectResult', agent: 'tester', callId: 'x' })).status).toBe(409);
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
