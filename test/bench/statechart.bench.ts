import { createActor } from 'xstate';
import { agentMachine } from '../../machines/agent.machine.js';
import { compileFlatMachine } from '../../src/agent/flat-machine.js';
import { measure, type Row } from './measure.js';

/**
 * The floor under every run: the agent statechart taking the same eight transitions as a
 * two-turn run with one call, with no-op stages — once in an XState actor, once in the compiled
 * table troupe steps agents with.
 */
export async function benchStatechart(iterations: number): Promise<Row[]> {
  const flags = { hasCalls: true };
  const noop = (): void => {};
  const machine = agentMachine.provide({
    actions: {
      entered: noop, deliberate: noop, parse: noop, validate: noop, requestApproval: noop,
      dispatch: noop, observe: noop, finish: noop, fail: noop, nudge: noop,
    },
    guards: { hasCalls: () => flags.hasCalls },
  });
  const events = [
    { type: 'run' },
    { type: 'model.responded' },
    { type: 'dispatch.settled' },
    { type: 'model.responded' },
  ] as const;

  const actor = createActor(machine, { input: { host: {} } });
  actor.subscribe({ error: noop });
  actor.start();
  const xstate = await measure('statechart in an XState actor (8 transitions)', iterations, () => {
    flags.hasCalls = true;
    for (const event of events) {
      actor.send(event);
      flags.hasCalls = false;
    }
    if (actor.getSnapshot().value !== 'done') throw new Error('statechart bench did not end in done');
  });

  const stepper = compileFlatMachine<{ host: object }>(machine);
  const context = { host: {} };
  let state = stepper.start(context);
  const compiled = await measure('statechart compiled, as agents step it', iterations, () => {
    flags.hasCalls = true;
    for (const event of events) {
      state = stepper.step(state, event, context);
      flags.hasCalls = false;
    }
    if (state !== 'done') throw new Error('statechart bench did not end in done');
  });
  return [xstate, compiled];
}
