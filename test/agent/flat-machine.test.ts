import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, setup, type AnyStateMachine } from 'xstate';
import { agentMachine } from '../../machines/agent.machine.js';
import { compileFlatMachine } from '../../src/agent/flat-machine.js';

// Every guard, action and event the machine names, read from the machine itself.
const GUARDS = Object.keys(agentMachine.implementations.guards);
const ACTIONS = Object.keys(agentMachine.implementations.actions);
const EVENTS: readonly string[] = agentMachine.events;

/** A machine with recording actions and guards read from `flags`. */
function instrumented(machine: AnyStateMachine, guards: readonly string[], actions: readonly string[], flags: Record<string, boolean>, log: string[]) {
  return machine.provide({
    actions: Object.fromEntries(
      actions.map((name) => [name, (_: unknown, params: unknown) => void log.push(params === undefined ? name : `${name}:${JSON.stringify(params)}`)]),
    ),
    guards: Object.fromEntries(guards.map((name) => [name, () => flags[name] === true])),
  });
}

/** Drives XState's interpreter and the compiled table with the same events and guard outcomes. */
function conforms(machine: AnyStateMachine, guards: readonly string[], actions: readonly string[], steps: readonly [string, readonly string[]][]): void {
  const flags: Record<string, boolean> = {};
  const xstateLog: string[] = [];
  const compiledLog: string[] = [];
  const actor = createActor(instrumented(machine, guards, actions, flags, xstateLog), { input: { host: {} } });
  actor.subscribe({ error: () => {} });
  const stepper = compileFlatMachine<{ host: object }>(instrumented(machine, guards, actions, flags, compiledLog));
  const context = { host: {} };
  actor.start();
  let state = stepper.start(context);
  expect(state).toBe(actor.getSnapshot().value);
  expect(compiledLog).toEqual(xstateLog);
  for (const [type, on] of steps) {
    for (const guard of guards) flags[guard] = on.includes(guard);
    actor.send({ type });
    state = stepper.step(state, { type }, context);
    expect(state).toBe(actor.getSnapshot().value);
    expect(compiledLog).toEqual(xstateLog);
  }
}

const step = (events: readonly string[], guards: readonly string[]) => fc.tuple(fc.constantFrom(...events), fc.uniqueArray(fc.constantFrom(...guards)));

/** A random flat machine: entry actions, guarded `on` and `always` transitions (`always` only forward, so it ends). */
const flatMachines = fc
  .record({
    states: fc.integer({ min: 2, max: 5 }),
    seed: fc.array(fc.nat(), { minLength: 60, maxLength: 60 }),
  })
  .map(({ states, seed }) => {
    let next = 0;
    const pick = (n: number) => seed[next++ % seed.length]! % n;
    const names = Array.from({ length: states }, (_, index) => `s${index}`);
    const transition = (from: number, targets: number[]) => {
      const target = names[targets[pick(targets.length)]!]!;
      const guard = pick(3) === 0 ? undefined : `g${pick(3)}`;
      const actions = pick(2) === 0 ? [] : [`a${pick(3)}`];
      return { target, ...(guard !== undefined && { guard }), ...(actions.length > 0 && { actions }) };
    };
    const config = Object.fromEntries(
      names.map((name, index) => {
        const others = names.map((_, other) => other).filter((other) => other !== index);
        const forward = others.filter((other) => other > index);
        const on = Object.fromEntries(['e0', 'e1'].filter(() => pick(3) > 0).map((event) => [event, [transition(index, others), transition(index, others)]]));
        const always = forward.length > 0 && pick(2) === 0 ? [transition(index, forward), transition(index, forward)] : [];
        return [name, { entry: [`a${pick(3)}`], on, ...(always.length > 0 && { always }) }];
      }),
    );
    const noop = () => {};
    return setup({
      actions: { a0: noop, a1: noop, a2: noop },
      guards: { g0: () => false, g1: () => false, g2: () => false },
    }).createMachine({ initial: 's0', states: config as never }) as unknown as AnyStateMachine;
  });

describe('the compiled agent machine', () => {
  it('takes the same transitions, with the same actions in the same order, as XState', () => {
    fc.assert(
      fc.property(fc.array(step(EVENTS, GUARDS), { maxLength: 12 }), (steps) => conforms(agentMachine, GUARDS, ACTIONS, steps)),
      { numRuns: 400 },
    );
  });

  it('covers every guard and action the machine names', () => {
    expect(GUARDS).toEqual(expect.arrayContaining(['turnOver', 'roundsExhausted', 'abortRequested', 'needsResultApproval']));
    expect(GUARDS).toHaveLength(12);
    expect(ACTIONS).toHaveLength(12);
    expect(EVENTS).toEqual(expect.arrayContaining(['run', 'model.responded', 'dispatch.settled', 'aborted']));
    expect(EVENTS).toHaveLength(10);
  });

  it('matches XState on any flat machine: eventless transitions after unhandled events and from the initial state', () => {
    fc.assert(
      fc.property(flatMachines, fc.array(step(['e0', 'e1', 'e2'], ['g0', 'g1', 'g2']), { maxLength: 10 }), (machine, steps) =>
        conforms(machine, ['g0', 'g1', 'g2'], ['a0', 'a1', 'a2'], steps),
      ),
      { numRuns: 300 },
    );
  });

  it('refuses constructs it does not implement', () => {
    const nested = setup({}).createMachine({ initial: 'a', states: { a: { initial: 'x', states: { x: {} } } } });
    expect(() => compileFlatMachine(nested)).toThrow(/"initial" is not supported|"states" is not supported/);
    const exits = setup({ actions: { bye: () => {} } }).createMachine({ initial: 'a', states: { a: { exit: 'bye' } } });
    expect(() => compileFlatMachine(exits)).toThrow(/"exit" is not supported/);
    const selfLoop = setup({}).createMachine({ initial: 'a', states: { a: { on: { go: 'a' } } } });
    expect(() => compileFlatMachine(selfLoop)).toThrow(/self-transitions/);
  });
});
