import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgent, createBus, defineTool, TroupeError, type Agent, type AgentOptions, type Envelope } from '../../src/index.js';
import { recordEvents, scriptedProvider } from '../../src/testing/index.js';
import { action, call } from './fixtures.js';

/**
 * The run as plain data: a snapshot taken at any point where the agent waits (for the model, a
 * repair, a decision) or between runs survives JSON, and a new agent made with the same options
 * continues from it to the events an uninterrupted run publishes.
 */

type Plan = { inputs: string[]; approvals: boolean[]; memory: boolean; at: number };
type Choices = Omit<Plan, 'at'> & { where: number };

const RESTING = new Set(['deliberating', 'repairing', 'awaitingApproval', 'awaitingResultApproval', 'done', 'failed']);

/** Everything an agent is made of, fresh: the tools keep their side effects per agent. */
function agentOptions(plan: Plan): { options: AgentOptions; effects: string[] } {
  const effects: string[] = [];
  const lookup = defineTool({
    name: 'lookup',
    description: 'Find a player.',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    readOnly: true,
    execute: async ({ id }) => ({ id, name: id === '7' ? 'Ana' : 'Bo' }),
  });
  const pay = defineTool({
    name: 'pay',
    description: 'Pay a player.',
    parameters: { type: 'object', properties: { id: { type: 'string' }, amount: { type: 'integer' } }, required: ['id', 'amount'] },
    needsApproval: async ({ amount }) => (amount as number) > 10,
    execute: ({ id, amount }) => {
      effects.push(`pay ${String(id)} ${String(amount)}`);
      return 'paid';
    },
  });
  const secret = defineTool({
    name: 'secret',
    description: 'Read the vault.',
    parameters: { type: 'object', properties: {} },
    needsResultApproval: true,
    execute: async () => 'the vault holds 12 coins',
  });
  // The model: a pure function of the run's input and round, answering after a hop (it is waited for).
  const turns: Record<string, string[]> = {
    A: [action(call('lookup', { id: '7' })), action(call('pay', { id: '7', amount: '50' })), action(call('secret', {})), 'Paid Ana.'],
    B: [action(call('pay', { id: '9', amount: '5' }), call('lookup', { id: '9' })), '<ACTION><lookup>', action(call('lookup', { idd: '9' })), 'Bo is paid.'],
    C: ['Nothing to do.'],
  };
  const provider = scriptedProvider(async (request) => {
    const input = [...request.messages].reverse().find((message) => message.role === 'user' && /^[ABC]$/.test(message.content))!.content;
    return turns[input]![request.round - 1] ?? 'Done.';
  });
  const options: AgentOptions = {
    name: 'clerk',
    tools: [lookup, pay, secret],
    provider,
    stream: false,
    seed: 11,
    repair: async (rejection) => (rejection.name === 'lookup' ? { args: { id: '9' } } : undefined),
    ...(plan.memory && { memory: true }),
  };
  return { options, effects };
}

/** The host: decides each request a moment later, approving or refusing by the call it is for. */
function host(agent: Agent, plan: Plan): { decideWaiting(): void } {
  const decide = (callId: string, result: boolean): void => {
    const key = [...callId].reduce((sum, char) => sum + char.charCodeAt(0), result ? 1 : 0);
    const approve = plan.approvals[key % plan.approvals.length]!;
    setTimeout(() => {
      if (result) void (approve ? agent.approveResult(callId) : agent.rejectResult(callId, 'not for the model'));
      else void (approve ? agent.approve(callId) : agent.deny(callId, 'too much'));
    }, 0);
  };
  agent.bus.on('tool.approval.requested', (event) => decide(event.data.callId, false));
  agent.bus.on('tool.result.approval.requested', (event) => decide(event.data.callId, true));
  return {
    decideWaiting() {
      for (const { callId } of agent.pendingApprovals()) decide(callId, false);
      for (const { callId } of agent.pendingResultApprovals()) decide(callId, true);
    },
  };
}

const bus = () => createBus({ clock: () => 0 });
const shape = (events: readonly Envelope[]) => events.filter((event) => event.type !== 'agent.spawned').map(({ type, agent, data }) => ({ type, agent, data }));

async function uninterrupted(plan: Plan) {
  const { options, effects } = agentOptions(plan);
  const agent = createAgent({ ...options, bus: bus() });
  const events = recordEvents(agent.bus);
  host(agent, plan);
  const results = [];
  for (const input of plan.inputs) results.push(await agent.run(input));
  const resting = events.filter('agent.state').filter((event) => RESTING.has(event.data.to)).length;
  return { events: shape(events.all), results, effects, memory: agent.memory?.messages(), resting };
}

async function interrupted(plan: Plan) {
  const first = agentOptions(plan);
  const agent = createAgent({ ...first.options, bus: bus() });
  const events = recordEvents(agent.bus);
  host(agent, plan);
  let resting = 0;
  let snapshot: string | undefined;
  const taken = new Promise<void>((resolve) => {
    agent.bus.on('agent.state', (event) => {
      if (!RESTING.has(event.data.to) || resting++ !== plan.at) return;
      // Between steps: a subscriber runs in the middle of one.
      expect(() => agent.snapshot()).toThrow(TroupeError);
      queueMicrotask(() => {
        snapshot = JSON.stringify(agent.snapshot());
        events.stop();
        agent.abort('the process went away');
        resolve();
      });
    });
  });
  const results = [];
  let next = 0;
  for (; next < plan.inputs.length && snapshot === undefined; next++) {
    const result = await Promise.race([agent.run(plan.inputs[next]!), taken.then(() => undefined)]);
    // A run that ended as the snapshot was taken ended in the first agent: its result stands.
    if (result !== undefined) results.push(result);
  }
  if (snapshot === undefined) return undefined;
  const second = agentOptions(plan);
  const resumed = createAgent({ ...second.options, bus: bus() });
  const after = recordEvents(resumed.bus);
  const continuing = resumed.resume(JSON.parse(snapshot));
  // What waited for a decision waits in the new agent: the host decides it there.
  host(resumed, plan).decideWaiting();
  const continued = await continuing;
  // A snapshot taken once a run had ended holds no run: that run's result came from the first agent.
  if (continued !== undefined) results[next - 1] = continued;
  expect(results).toHaveLength(next);
  for (; next < plan.inputs.length; next++) results.push(await resumed.run(plan.inputs[next]!));
  return {
    events: [...shape(events.all), ...shape(after.all)],
    results,
    effects: [...first.effects, ...second.effects],
    memory: resumed.memory?.messages(),
  };
}

describe('agent snapshots', () => {
  it('round-trip through JSON at any resting point and continue to the same events', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          inputs: fc.array(fc.constantFrom('A', 'B', 'C'), { minLength: 1, maxLength: 3 }),
          approvals: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
          memory: fc.boolean(),
          where: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        }),
        async ({ where, ...choices }: Choices) => {
          const reference = await uninterrupted({ ...choices, at: 0 });
          const plan = { ...choices, at: Math.floor(where * reference.resting) };
          const resumed = await interrupted(plan);
          expect(resumed).toBeDefined();
          if (resumed === undefined) return;
          expect(resumed.events).toEqual(reference.events);
          expect(resumed.results.map((result) => result?.reason)).toEqual(reference.results.map((result) => result.reason));
          expect(resumed.effects).toEqual(reference.effects);
          expect(resumed.memory).toEqual(reference.memory);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('is plain data: versioned, JSON-safe, image bytes included', async () => {
    const provider = scriptedProvider([action(call('lookup', { id: '7' })), 'Ana.']);
    const lookup = defineTool({
      name: 'lookup',
      description: 'Find a player.',
      parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      needsApproval: true,
      execute: () => 'Ana',
    });
    const agent = createAgent({ name: 'clerk', tools: [lookup], provider, stream: false });
    const asked = new Promise<void>((resolve) => agent.bus.once('tool.approval.requested', () => queueMicrotask(resolve)));
    const image = { data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]), mediaType: 'image/png' as const };
    void agent.run('Who is 7?', { images: [image] });
    await asked;
    const snapshot = agent.snapshot();
    expect(snapshot).toMatchObject({ v: 1, kind: 'troupe.agent', agent: 'clerk', state: 'awaitingApproval', runs: 1 });
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    agent.abort();
  });

  it('refuses a snapshot of another agent, another version, or while a run is in progress', async () => {
    const make = (name: string) => createAgent({ name, provider: scriptedProvider(['Hi.', 'Hi.']) });
    const snapshot = make('ana').snapshot();
    expect(() => make('bo').resume(snapshot)).toThrow(/agent "ana"'s/);
    expect(() => make('ana').resume({ ...snapshot, v: 2 as 1 })).toThrow(/version 2/);
    expect(() => make('ana').resume({ ...snapshot, state: 'parsing' })).toThrow(/not one a run rests in/);
    const busy = make('ana');
    const running = busy.run('hi');
    expect(() => busy.resume(snapshot)).toThrow(/already running/);
    await running;
  });
});
