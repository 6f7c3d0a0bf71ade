import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { agentMachine, type AgentMachineEvent, type AgentStateName } from '../../machines/agent.machine.js';

type GuardName = keyof NonNullable<Parameters<typeof agentMachine.provide>[0]['guards']>;

/** Every guard the machine implements, read from the machine itself: a guard added later is faked too. */
const GUARDS = Object.keys(agentMachine.implementations.guards) as GuardName[];

/** A fake host: guards read its flags, actions log what ran. No I/O, no troupe runtime. */
type Flags = Partial<Record<GuardName, boolean>>;

function fakeAgent(flags: Flags) {
  const entered: AgentStateName[] = [];
  const ran: string[] = [];
  const guard = (name: keyof Flags) => () => flags[name] === true;
  const action = (name: string) => () => void ran.push(name);
  const machine = agentMachine.provide({
    actions: {
      entered: (_, params) => void entered.push(params.state),
      deliberate: action('deliberate'),
      parse: action('parse'),
      validate: action('validate'),
      repair: action('repair'),
      requestApproval: action('requestApproval'),
      dispatch: action('dispatch'),
      requestResultApproval: action('requestResultApproval'),
      observe: action('observe'),
      finish: action('finish'),
      fail: action('fail'),
      nudge: action('nudge'),
    },
    guards: Object.fromEntries(GUARDS.map((name) => [name, guard(name)])) as Record<GuardName, () => boolean>,
  });
  const actor = createActor(machine, { input: { host: {} } });
  actor.subscribe({ error: (error) => ran.push(`error:${String(error)}`) });
  actor.start();
  const send = (...types: AgentMachineEvent['type'][]) => {
    for (const type of types) actor.send({ type });
  };
  return { actor, entered, ran, send, flags };
}

describe('agent machine', () => {
  it('answers without calls: deliberating → parsing → done', () => {
    const agent = fakeAgent({});
    agent.send('run', 'model.responded');
    expect(agent.entered).toEqual(['idle', 'deliberating', 'parsing', 'done']);
    expect(agent.ran).toEqual(['deliberate', 'parse', 'finish']);
  });

  it('runs a full cycle and comes back to deliberating', () => {
    const agent = fakeAgent({ hasCalls: true });
    agent.send('run', 'model.responded', 'dispatch.settled');
    expect(agent.entered).toEqual(['idle', 'deliberating', 'parsing', 'validating', 'dispatching', 'observing', 'deliberating']);
    expect(agent.actor.getSnapshot().value).toBe('deliberating');
  });

  it('sends malformed output and rejected calls to observing, without dispatch', () => {
    const malformed = fakeAgent({ malformed: true });
    malformed.send('run', 'model.responded');
    expect(malformed.entered.slice(-2)).toEqual(['observing', 'deliberating']);
    const rejected = fakeAgent({ hasCalls: true, rejected: true });
    rejected.send('run', 'model.responded');
    expect(rejected.entered).toContain('validating');
    expect(rejected.ran).not.toContain('dispatch');
  });

  it('parks in awaitingApproval and goes on to dispatching or observing', () => {
    const approved = fakeAgent({ hasCalls: true, needsApproval: true, anyApproved: true });
    approved.send('run', 'model.responded');
    expect(approved.actor.getSnapshot().value).toBe('awaitingApproval');
    approved.send('dispatch.settled');
    expect(approved.actor.getSnapshot().value).toBe('awaitingApproval');
    approved.send('approval.settled');
    expect(approved.actor.getSnapshot().value).toBe('dispatching');
    const denied = fakeAgent({ hasCalls: true, needsApproval: true, anyApproved: false });
    denied.send('run', 'model.responded', 'approval.settled');
    expect(denied.entered.slice(-2)).toEqual(['observing', 'deliberating']);
  });

  it('repairs a rejected block once, then observes it or goes on as if it were valid', () => {
    const stillRejected = fakeAgent({ hasCalls: true, rejected: true, repairable: true });
    stillRejected.send('run', 'model.responded');
    expect(stillRejected.actor.getSnapshot().value).toBe('repairing');
    expect(stillRejected.ran.at(-1)).toBe('repair');
    stillRejected.send('dispatch.settled', 'approval.settled');
    expect(stillRejected.actor.getSnapshot().value).toBe('repairing');
    stillRejected.send('repair.settled');
    expect(stillRejected.entered.slice(-3)).toEqual(['repairing', 'observing', 'deliberating']);

    const fixed = fakeAgent({ hasCalls: true, rejected: true, repairable: true });
    fixed.send('run', 'model.responded');
    fixed.flags.rejected = false;
    fixed.flags.needsApproval = true;
    fixed.send('repair.settled');
    expect(fixed.actor.getSnapshot().value).toBe('awaitingApproval');
    const plain = fakeAgent({ hasCalls: true, rejected: true, repairable: true });
    plain.send('run', 'model.responded');
    plain.flags.rejected = false;
    plain.send('repair.settled');
    expect(plain.actor.getSnapshot().value).toBe('dispatching');
  });

  it('holds results in awaitingResultApproval after dispatch, then observes', () => {
    const agent = fakeAgent({ hasCalls: true, needsResultApproval: true });
    agent.send('run', 'model.responded', 'dispatch.settled');
    expect(agent.actor.getSnapshot().value).toBe('awaitingResultApproval');
    expect(agent.ran.at(-1)).toBe('requestResultApproval');
    agent.send('approval.settled', 'dispatch.settled');
    expect(agent.actor.getSnapshot().value).toBe('awaitingResultApproval');
    agent.send('results.settled');
    expect(agent.entered.slice(-3)).toEqual(['awaitingResultApproval', 'observing', 'deliberating']);
  });

  it('fails when corrections run out, and nudges when rounds run out', () => {
    const exhausted = fakeAgent({ malformed: true, correctionsExhausted: true });
    exhausted.send('run', 'model.responded');
    expect(exhausted.actor.getSnapshot().value).toBe('failed');
    expect(exhausted.ran.at(-1)).toBe('fail');
    const nudged = fakeAgent({ hasCalls: true, roundsExhausted: true });
    nudged.send('run', 'model.responded', 'dispatch.settled');
    expect(nudged.ran).toContain('nudge');
    nudged.flags.nudged = true;
    nudged.send('model.responded');
    expect(nudged.actor.getSnapshot().value).toBe('done');
  });

  it('ends a scene turn whose rounds are spent, before any nudge', () => {
    const agent = fakeAgent({ hasCalls: true, turnOver: true, roundsExhausted: true });
    agent.send('run', 'model.responded', 'dispatch.settled');
    expect(agent.entered.slice(-2)).toEqual(['observing', 'done']);
    expect(agent.ran).not.toContain('nudge');
    expect(agent.ran.at(-1)).toBe('finish');
  });

  it('fakes exactly the guards the transitions name', () => {
    const named = new Set<unknown>();
    for (const node of Object.values(agentMachine.config.states ?? {})) {
      const transitions = [...Object.values(node.on ?? {}), node.always ?? []].flat();
      for (const transition of transitions) if (typeof transition === 'object' && 'guard' in transition) named.add(transition.guard);
    }
    expect([...named].sort()).toEqual([...GUARDS].sort());
    expect(GUARDS).toContain('turnOver');
  });

  it('ends in done on abort from every waiting state, and fails on model or dispatch failure', () => {
    for (const setup of [
      { flags: {}, events: ['run'] as const },
      { flags: { hasCalls: true }, events: ['run', 'model.responded'] as const },
      { flags: { hasCalls: true, needsApproval: true }, events: ['run', 'model.responded'] as const },
      { flags: { hasCalls: true, rejected: true, repairable: true }, events: ['run', 'model.responded'] as const },
      { flags: { hasCalls: true, needsResultApproval: true }, events: ['run', 'model.responded', 'dispatch.settled'] as const },
    ]) {
      const agent = fakeAgent(setup.flags);
      agent.send(...setup.events, 'aborted');
      expect(agent.actor.getSnapshot().value).toBe('done');
    }
    const modelFailed = fakeAgent({});
    modelFailed.send('run', 'model.failed');
    expect(modelFailed.actor.getSnapshot().value).toBe('failed');
    const dispatchFailed = fakeAgent({ hasCalls: true });
    dispatchFailed.send('run', 'model.responded', 'dispatch.failed');
    expect(dispatchFailed.actor.getSnapshot().value).toBe('failed');
  });

  it('serves another run from done and from failed', () => {
    const agent = fakeAgent({});
    agent.send('run', 'model.responded', 'run');
    expect(agent.actor.getSnapshot().value).toBe('deliberating');
    agent.send('model.failed', 'run');
    expect(agent.actor.getSnapshot().value).toBe('deliberating');
  });

  it('ignores events that do not belong to the current state', () => {
    const agent = fakeAgent({});
    agent.send('model.responded', 'dispatch.settled', 'approval.settled', 'aborted');
    expect(agent.actor.getSnapshot().value).toBe('idle');
    expect(agent.ran).toEqual([]);
  });
});
