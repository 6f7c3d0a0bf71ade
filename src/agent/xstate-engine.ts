import { createActor, type Actor, type InspectionEvent, type Observer } from 'xstate';
import type { AgentMachine, AgentMachineContext, AgentMachineEvent } from '../../machines/agent.machine.js';
import { providedAgentMachine } from './agent-stepper.js';
import type { MachineStepper } from './machine-actor.js';

/** An XState inspection observer, as `createActor(logic, { inspect })` takes it. */
export type AgentInspect = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/**
 * The agent machine stepped by XState's own interpreter (`engine: 'xstate'`): one live actor per
 * agent, running the same provided actions and guards as the compiled table. It has the
 * compiled stepper's shape, so the agent's mailbox, error handling and snapshots are the same code
 * for both engines; only the step differs.
 *
 * The agent's mailbox hands the actor one event at a time and never while it is processing, so
 * XState's own mailbox is always empty: events sent from inside actions or bus subscribers wait in
 * the agent's mailbox, and are taken in the same order by both engines. The runtime reads its
 * state from the actor's snapshot. When the runtime puts the machine in another state without
 * entering it (after a stage threw, or on `resume`), the next step starts a fresh actor from that
 * state, as XState restores a persisted snapshot: no entry actions run.
 */
export function xstateStepper(options: { id: string; inspect?: AgentInspect | undefined }): MachineStepper {
  let actor: Actor<AgentMachine> | undefined;
  let host: object | undefined;

  const launch = (state?: string): Actor<AgentMachine> => {
    // A restored context is walked field by field (XState revives actor references in it): the
    // runtime, out of sight there, is not. (The machine's context factory copies its input, so a
    // started machine's host is an ordinary field, which the runtime's `toJSON` keeps small for inspectors.)
    const snapshot = state === undefined ? undefined : providedAgentMachine.resolveState({ value: state as never, context: hidden(host!) });
    const next = createActor(providedAgentMachine, {
      id: options.id,
      input: { host: host! },
      ...(snapshot !== undefined && { snapshot }),
      ...(options.inspect !== undefined && { inspect: options.inspect }),
    });
    // An action that throws puts the actor in `error`; the step rethrows it to the agent. Without an
    // error observer XState would also throw it again from a timer.
    next.subscribe({ error: () => {} });
    next.start();
    return next;
  };

  return {
    initial: providedAgentMachine.config.initial as string,
    start(context) {
      host = context.host;
      actor = launch();
      return settled(actor);
    },
    step(state, event) {
      const current = actor!.getSnapshot();
      if (current.status !== 'active' || current.value !== state) {
        actor!.stop();
        actor = launch(state);
      }
      actor!.send(event as AgentMachineEvent);
      return settled(actor!);
    },
  };
}

function hidden(host: object): AgentMachineContext {
  return Object.defineProperty({}, 'host', { value: host, enumerable: false }) as AgentMachineContext;
}

/** The state the actor reached; an action that threw is thrown again, as the compiled table throws it. */
function settled(actor: Actor<AgentMachine>): string {
  const snapshot = actor.getSnapshot();
  if (snapshot.status === 'error') throw snapshot.error;
  return snapshot.value;
}
