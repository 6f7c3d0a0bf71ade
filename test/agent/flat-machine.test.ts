import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, setup } from 'xstate';
import { agentMachine, type AgentMachineEvent } from '../../machines/agent.machine.js';
import { compileFlatMachine } from '../../src/agent/flat-machine.js';

const GUARDS = [
  'nudged', 'malformed', 'hasCalls', 'rejected', 'repairable', 'needsApproval',
  'anyApproved', 'needsResultApproval', 'correctionsExhausted', 'abortRequested', 'roundsExhausted',
] as const;
const ACTIONS = [
  'entered', 'deliberate', 'parse', 'validate', 'repair', 'requestApproval',
  'dispatch', 'requestResultApproval', 'observe', 'finish', 'fail', 'nudge',
] as const;
const EVENTS: AgentMachineEvent['type'][] = [
  'run', 'model.responded', 'model.failed', 'repair.settled', 'approval.settled', 'dispatch.settled', 'results.settled',
  'dispatch.failed', 'budget.exhausted', 'aborted',
];

/** The agent machine with recording actions and guards read from `flags`. */
function instrumented(flags: Record<string, boolean>, log: string[]) {
  const actions = Object.fromEntries(
    ACTIONS.map((name) => [name, (_: unknown, params: unknown) => void log.push(params === undefined ? name : `${name}:${JSON.stringify(params)}`)]),
  );
  const guards = Object.fromEntries(GUARDS.map((name) => [name, () => flags[name] === true]));
  return agentMachine.provide({ actions, guards } as Parameters<typeof agentMachine.provide>[0]);
}

describe('the compiled agent machine', () => {
  it('takes the same transitions, with the same actions in the same order, as XState', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...EVENTS), fc.uniqueArray(fc.constantFrom(...GUARDS))), { maxLength: 12 }),
        (steps) => {
          const flags: Record<string, boolean> = {};
          const xstateLog: string[] = [];
          const compiledLog: string[] = [];
          // Guards read the flags of the step being taken, for both machines alike.
          const actor = createActor(instrumented(flags, xstateLog), { input: { host: {} } });
          actor.subscribe({ error: () => {} });
          actor.start();
          const stepper = compileFlatMachine<{ host: object }>(instrumented(flags, compiledLog));
          const context = { host: {} };
          let state = stepper.start(context);
          expect(compiledLog).toEqual(xstateLog);
          for (const [type, on] of steps) {
            for (const guard of GUARDS) flags[guard] = on.includes(guard);
            actor.send({ type });
            state = stepper.step(state, { type }, context);
            expect(state).toBe(actor.getSnapshot().value);
            expect(compiledLog).toEqual(xstateLog);
          }
        },
      ),
      { numRuns: 400 },
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
