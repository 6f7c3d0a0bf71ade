import { agentMachine, type AgentMachine, type AgentMachineContext } from '../../machines/agent.machine.js';
import type { AgentRuntime } from './agent-runtime.js';
import { compileFlatMachine, type FlatMachine } from './flat-machine.js';
import * as stages from './stages.js';

type Args = { context: AgentMachineContext };

/** Lifts a stage or guard of the runtime into the form XState calls: the agent is the context's host. */
const onHost =
  <TResult>(stage: (host: AgentRuntime) => TResult) =>
  ({ context }: Args): TResult =>
    stage(context.host as AgentRuntime);

const { guards } = stages;

/** The agent machine with troupe's stages filled in (XState's own view, for tools and tests). */
export const providedAgentMachine: AgentMachine = agentMachine.provide({
  actions: {
    entered: ({ context }: Args, params: { state: Parameters<typeof stages.entered>[1] }) =>
      stages.entered(context.host as AgentRuntime, params.state),
    deliberate: onHost(stages.deliberate),
    parse: onHost(stages.parse),
    validate: onHost(stages.validate),
    repair: onHost(stages.repair),
    requestApproval: onHost(stages.requestApproval),
    dispatch: onHost(stages.dispatch),
    requestResultApproval: onHost(stages.requestResultApproval),
    observe: onHost(stages.observe),
    finish: onHost(stages.finish),
    fail: onHost(stages.fail),
    nudge: onHost(stages.nudge),
  },
  guards: {
    nudged: onHost(guards.nudged),
    malformed: onHost(guards.malformed),
    hasCalls: onHost(guards.hasCalls),
    rejected: onHost(guards.rejected),
    repairable: onHost(guards.repairable),
    needsApproval: onHost(guards.needsApproval),
    anyApproved: onHost(guards.anyApproved),
    needsResultApproval: onHost(guards.needsResultApproval),
    correctionsExhausted: onHost(guards.correctionsExhausted),
    abortRequested: onHost(guards.abortRequested),
    turnOver: onHost(guards.turnOver),
    roundsExhausted: onHost(guards.roundsExhausted),
  },
});

/** The provided machine compiled for stepping: one table serves every agent. */
export const agentStepper: FlatMachine<AgentMachineContext> = compileFlatMachine(providedAgentMachine);
