import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import { describe, expect, it, vi } from 'vitest';
import { assign, createActor, createMachine, setup, waitFor, type AnyEventObject } from 'xstate';
import { createAgent, defineTool, scriptedProvider, type Envelope, type RunResult } from '../../src/index.js';
import { agentLogic, inspectAgent, type AgentActorRef } from '../../src/xstate/index.js';

/** A guard's tools: a gate to open (needs approval), and a lamp to look at (read-only). */
function guardTools() {
  const opened: string[] = [];
  const gate = defineTool({
    name: 'open_gate',
    description: 'Open the town gate for someone.',
    parameters: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] } as const,
    needsApproval: true,
    execute: ({ who }) => (opened.push(who), `the gate opens for ${who}`),
  });
  const lamp = defineTool({
    name: 'look',
    description: 'Look around.',
    readOnly: true,
    parameters: { type: 'object', properties: {} } as const,
    execute: () => 'a quiet night',
  });
  return { tools: [gate, lamp], opened };
}

const LOOK = '<ACTION><look></look></ACTION>';
const OPEN = (who: string) => `<ACTION><open_gate><who>${who}</who></open_gate></ACTION>`;

describe('agentLogic: a troupe agent as an XState actor', () => {
  it('is invoked by a parent machine with an input, and its result is the output onDone reads', async () => {
    const { tools } = guardTools();
    const parent = setup({
      actors: { guard: agentLogic({ name: 'guard', tools, provider: scriptedProvider([LOOK, 'All quiet.']) }) },
    }).createMachine({
      context: { answer: '' },
      initial: 'watching',
      states: {
        watching: {
          invoke: {
            src: 'guard',
            input: { input: 'Anything out there?' },
            onDone: { target: 'reported', actions: assign({ answer: ({ event }) => (event.output as RunResult).text }) },
          },
        },
        reported: { type: 'final' },
      },
    });
    const actor = createActor(parent).start();
    const done = await waitFor(actor, (snapshot) => snapshot.status === 'done');
    expect(done.context.answer).toBe('All quiet.');
  });

  it('lives on when spawned: takes run, approve and deny events, and sends the events asked for to its parent', async () => {
    const { tools, opened } = guardTools();
    const logic = agentLogic({ name: 'guard', tools, provider: scriptedProvider([OPEN('ana'), 'Ana is in.', OPEN('bram'), 'Bram stays out.']) }, { toParent: ['tool.approval.requested', 'agent.finished'] });
    const parent = setup({ actors: { guard: logic }, types: { context: {} as { guard?: AgentActorRef; seen: string[] } } }).createMachine({
      context: { seen: [] },
      entry: assign({ guard: ({ spawn }) => spawn('guard', { id: 'guard' }) }),
      on: {
        // The town decides at its gate: ana may pass, anybody else may not.
        'tool.approval.requested': {
          actions: [
            assign({ seen: ({ context, event }) => [...context.seen, `asked ${(event as unknown as Envelope<'tool.approval.requested'>).data.args.who as string}`] }),
            ({ context, event }) => {
              const { callId, args } = (event as unknown as Envelope<'tool.approval.requested'>).data;
              context.guard!.send(args.who === 'ana' ? { type: 'approve', callId } : { type: 'deny', callId, reason: 'the gate is shut for the night' });
            },
          ],
        },
        'agent.finished': { actions: assign({ seen: ({ context, event }) => [...context.seen, `finished ${(event as unknown as Envelope<'agent.finished'>).data.text}`] }) },
      },
    });
    const town = createActor(parent).start();
    const guard = town.getSnapshot().context.guard!;
    const started: string[] = [];
    guard.on('tool.started', (event) => void started.push(event.data.name));

    guard.send({ type: 'run', input: 'Ana knocks.' });
    await waitFor(town, (snapshot) => snapshot.context.seen.length === 2);
    await waitFor(guard, (snapshot) => !snapshot.context.running);
    expect(guard.getSnapshot().context).toMatchObject({ agent: 'guard', state: 'done', running: false, lastResult: { reason: 'final_answer', text: 'Ana is in.' } });
    guard.send({ type: 'run', input: 'Bram knocks.' });
    await waitFor(town, (snapshot) => snapshot.context.seen.length === 4);
    expect(town.getSnapshot().context.seen).toEqual(['asked ana', 'finished Ana is in.', 'asked bram', 'finished Bram stays out.']);
    expect(opened).toEqual(['ana']);
    expect(started).toEqual(['open_gate']);
    expect(guard.getSnapshot().status).toBe('active');
    town.stop();
    expect(guard.getSnapshot().status).toBe('stopped');
  });

  it('shows a parked call in its snapshot, refuses a second run while one is in progress, and aborts on stop', async () => {
    const { tools, opened } = guardTools();
    const guard = createActor(agentLogic({ name: 'guard', tools, provider: scriptedProvider([OPEN('cat')]) })).start();
    guard.send({ type: 'run', input: 'A cat at the gate.' });
    const parked = await waitFor(guard, (snapshot) => snapshot.context.pendingApprovals.length === 1);
    expect(parked.context).toMatchObject({ state: 'awaitingApproval', running: true, pendingApprovals: [{ name: 'open_gate', args: { who: 'cat' } }] });
    guard.send({ type: 'run', input: 'And a dog.' });
    expect(guard.getSnapshot().context.refused).toMatch(/agent "guard" is already running: the run event for "And a dog." was refused/);
    guard.send({ type: 'abort', reason: 'night shift over' });
    const after = await waitFor(guard, (snapshot) => !snapshot.context.running);
    expect(after.context.lastResult).toMatchObject({ reason: 'aborted' });
    expect(opened).toEqual([]);
    guard.stop();
  });

  it('is made by a function from the input, and fails the actor when the agent rejects the run', async () => {
    const agent = createAgent({ name: 'clerk', provider: scriptedProvider(['Done.']) });
    await agent.close();
    const actor = createActor(agentLogic(() => agent), { input: { input: 'Anything?' } });
    // As for any XState actor, an error nobody listens for is thrown: this test listens.
    const errors: unknown[] = [];
    actor.subscribe({ error: (error) => void errors.push(error) });
    actor.start();
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(String(errors[0])).toMatch(/agent "clerk" is closed/);
    expect(actor.getSnapshot()).toMatchObject({ status: 'error', error: errors[0] });
  });
});

describe('inspection through @statelyai/inspect', () => {
  const collect = () => {
    const events: StatelyInspectionEvent[] = [];
    const inspector = createInspector({ send: (event) => void events.push(event) });
    return { events, inspector };
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  it('inspectAgent reports an agent as an actor drawn from its statechart, with each state', async () => {
    const { tools } = guardTools();
    const { events, inspector } = collect();
    const agent = createAgent({ name: 'guard', tools, provider: scriptedProvider([LOOK, 'All quiet.']) });
    const reported: string[] = [];
    agent.bus.on('agent.state', (event) => void reported.push(event.data.to));
    const stop = inspectAgent(agent, inspector.inspect);
    await agent.run('Anything out there?');
    stop();
    await settle();
    const actor = events.find((event) => event.type === '@xstate.actor');
    expect(actor).toMatchObject({ name: 'guard', sessionId: 'troupe:guard' });
    const definition = JSON.parse((actor as { definition: string }).definition) as { states: Record<string, unknown> };
    expect(Object.keys(definition.states)).toEqual(expect.arrayContaining(['idle', 'deliberating', 'parsing', 'validating', 'dispatching', 'observing', 'done', 'failed']));
    const states = events.filter((event) => event.type === '@xstate.snapshot').map((event) => (event.snapshot as unknown as { value: string }).value);
    expect(states).toEqual(reported);
    expect(states).toEqual(['deliberating', 'parsing', 'validating', 'dispatching', 'observing', 'deliberating', 'parsing', 'done']);
    const sent = events.filter((event) => event.type === '@xstate.event').map((event) => (event.event as AnyEventObject).type);
    expect(sent).toEqual(expect.arrayContaining(['run.started', 'tool.started', 'tool.completed', 'agent.finished']));
  });

  it('an XState system that spawns agents shows each agent actor and its state', async () => {
    const { tools } = guardTools();
    const { events, inspector } = collect();
    const parent = createMachine({ invoke: { src: agentLogic({ name: 'guard', tools, provider: scriptedProvider([LOOK, 'All quiet.']) }), input: { input: 'Look.' } } });
    const actor = createActor(parent, { inspect: inspector.inspect }).start();
    // The inspector serializes when the event loop is idle: wait until the agent actor's last snapshot is there.
    await vi.waitFor(() => expect(events.some((event) => event.type === '@xstate.snapshot' && (event.snapshot as { status?: string }).status === 'done' && (event.snapshot as { context?: { agent?: string } }).context?.agent === 'guard')).toBe(true));
    const agentStates = events
      .flatMap((event) => (event.type === '@xstate.snapshot' && (event.snapshot as { context?: { agent?: string } }).context?.agent === 'guard' ? [event.snapshot] : []))
      .map((snapshot) => (snapshot as unknown as { context: { state: string } }).context.state);
    expect(agentStates).toContain('deliberating');
    expect(agentStates.at(-1)).toBe('done');
    actor.stop();
  });
});
