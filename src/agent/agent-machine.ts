import { agentMachine, type AgentMachine, type AgentMachineContext } from '../../machines/agent.machine.js';
import { compileFlatMachine, type FlatMachine } from './flat-machine.js';
import type { AgentRuntime } from './agent-runtime.js';
import * as stages from './stages.js';

const { guards } = stages;
type Args = { context: { host: object } };
const hostOf = (context: Args['context']): AgentRuntime => context.host as AgentRuntime;

/** The agent machine with troupe's stages filled in (XState's own view, for tools and tests). */
export const providedAgentMachine: AgentMachine = agentMachine.provide({
  actions: {
    entered: ({ context }: Args, params: { state: Parameters<typeof stages.entered>[1] }) => stages.entered(hostOf(context), params.state),
    deliberate: ({ context }: Args) => stages.deliberate(hostOf(context)),
    parse: ({ context }: Args) => stages.parse(hostOf(context)),
    validate: ({ context }: Args) => stages.validate(hostOf(context)),
    requestApproval: ({ context }: Args) => stages.requestApproval(hostOf(context)),
    dispatch: ({ context }: Args) => stages.dispatch(hostOf(context)),
    observe: ({ context }: Args) => stages.observe(hostOf(context)),
    finish: ({ context }: Args) => stages.finish(hostOf(context)),
    fail: ({ context }: Args) => stages.fail(hostOf(context)),
    nudge: ({ context }: Args) => stages.nudge(hostOf(context)),
  },
  guards: {
    nudged: ({ context }: Args) => guards.nudged(hostOf(context)),
    malformed: ({ context }: Args) => guards.malformed(hostOf(context)),
    hasCalls: ({ context }: Args) => guards.hasCalls(hostOf(context)),
    rejected: ({ context }: Args) => guards.rejected(hostOf(context)),
    needsApproval: ({ context }: Args) => guards.needsApproval(hostOf(context)),
    anyApproved: ({ context }: Args) => guards.anyApproved(hostOf(context)),
    correctionsExhausted: ({ context }: Args) => guards.correctionsExhausted(hostOf(context)),
    abortRequested: ({ context }: Args) => guards.abortRequested(hostOf(context)),
    roundsExhausted: ({ context }: Args) => guards.roundsExhausted(hostOf(context)),
  },
});

/** The provided machine compiled for stepping: one table serves every agent. */
export const agentStepper: FlatMachine<AgentMachineContext> = compileFlatMachine(providedAgentMachine);
