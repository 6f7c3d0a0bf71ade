import { createActor, type Actor, type InspectionEvent, type Observer } from 'xstate';
import type { AgentMachine, AgentMachineContext, AgentMachineEvent, AgentStateName } from '../../machines/agent.machine.js';
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
 * state from the actor's snapshot.
 *
 * Every actor starts from a snapshot resolved in a given state (`machine.resolveState`), as XState
 * restores a persisted one: no entry actions run. The first rests in `idle`; when the runtime puts
 * the machine in another state without entering it (after a stage threw, or on `resume`), the next
 * step starts a fresh actor in that state. (Starting from the machine's `input` instead would run
 * XState's context assignment, which warns when an agent is made inside another agent's action: a
 * skill's child agent.)
 */
export function xstateStepper(options: { id: string; inspect?: AgentInspect | undefined }): MachineStepper {
  let actor: Actor<AgentMachine> | undefined;
  let context: AgentMachineContext | undefined;

  const launch = (state: string): Actor<AgentMachine> => {
    const next = createActor(providedAgentMachine, {
      id: options.id,
      // Required by the type; a machine restored from a snapshot never reads it.
      input: context!,
      snapshot: providedAgentMachine.resolveState({ value: state as AgentStateName, context: context! }),
      ...(options.inspect !== undefined && { inspect: options.inspect }),
    });
    // An action that throws puts the actor in `error`; the step throws it again to the agent.
    // Without an error observer XState would also throw it from a timer.
    next.subscribe({ error: () => {} });
    next.start();
    return next;
  };

  const initial = providedAgentMachine.config.initial as string;
  return {
    initial,
    start(runtime) {
      context = contextOf(runtime.host, options.id);
      // Resting in the initial state, as the compiled table starts: its entry only reports the
      // state the agent is in already.
      actor = launch(initial);
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
    stop() {
      actor?.stop();
    },
  };
}

/**
 * The machine's context: the runtime as `host`, out of sight (not enumerable), so that XState's
 * walk over a restored context and an inspector's serialization see only the agent's name.
 */
function contextOf(host: object, agent: string): AgentMachineContext {
  return Object.defineProperty({ agent }, 'host', { value: host, enumerable: false }) as unknown as AgentMachineContext;
}

/** The state the actor reached; an action that threw is thrown again, as the compiled table throws it. */
function settled(actor: Actor<AgentMachine>): string {
  const snapshot = actor.getSnapshot();
  if (snapshot.status === 'error') throw snapshot.error;
  return snapshot.value;
}
