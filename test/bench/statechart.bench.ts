import { agentMachine } from '../../machines/agent.machine.js';
import { machineScope } from '../../src/agent/machine-scope.js';
import { measure, type Row } from './measure.js';

/**
 * The floor under every run: the agent statechart stepping through the same eight transitions as
 * a two-turn run with one call, with no-op stages. What XState itself costs.
 */
export async function benchStatechart(iterations: number): Promise<Row> {
  const flags = { hasCalls: true };
  const noop = (): void => {};
  const machine = agentMachine.provide({
    actions: {
      entered: noop, deliberate: noop, parse: noop, validate: noop, requestApproval: noop,
      dispatch: noop, observe: noop, finish: noop, fail: noop, nudge: noop,
    },
    guards: { hasCalls: () => flags.hasCalls },
  });
  const scope = machineScope(machine);
  let snapshot = machine.getInitialSnapshot(scope, { host: {} });
  const events = [
    { type: 'run' },
    { type: 'model.responded' },
    { type: 'dispatch.settled' },
    { type: 'model.responded' },
  ] as const;
  return measure('statechart alone (8 transitions, no-op stages)', iterations, () => {
    flags.hasCalls = true;
    for (const event of events) {
      snapshot = machine.transition(snapshot, event, scope);
      flags.hasCalls = false;
    }
    if (snapshot.value !== 'done') throw new Error(`statechart bench ended in ${String(snapshot.value)}`);
  });
}
