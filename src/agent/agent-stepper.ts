import { agentMachine, type AgentMachine, type AgentMachineContext, type AgentStateName } from '../../machines/agent.machine.js';
import type { AgentConfig } from './agent-config.js';
import type { AgentRuntime } from './agent-runtime.js';
import { compileFlatMachine, type FlatMachine } from './flat-machine.js';
import type { RunState } from './run/run-state.js';
import { checkApprovals, openCallGate, RESULT_GATE } from './stages/approval-gate.js';
import { deliberate } from './stages/deliberate.js';
import { dispatch } from './stages/dispatch.js';
import { fail, finish, nudge } from './stages/finish.js';
import { guards, type Guard } from './stages/guards.js';
import { observe } from './stages/observe.js';
import { parse } from './stages/parse.js';
import { repair } from './stages/repair.js';
import { validate } from './stages/validate.js';
import type { StagePort } from './stages/stage-port.js';

type Implementations = Parameters<AgentMachine['provide']>[0];
type Args = { context: AgentMachineContext };

/** The agent behind the machine's context. */
function hostOf({ context }: Args): AgentRuntime {
  return context.host as AgentRuntime;
}

/** The agent's run: an action or guard runs only during one. */
function runOf(host: AgentRuntime): RunState {
  const run = host.current;
  if (run === undefined) throw new Error(`agent "${host.name}" has no active run`);
  return run;
}

/** Lifts a stage into the form XState calls: its run, its config and its port are the agent's. */
const stage =
  (body: (run: RunState, config: AgentConfig, port: StagePort) => void) =>
  (args: Args): void => {
    const host = hostOf(args);
    body(runOf(host), host.config, host);
  };

/** Every action the machine names, filled in (the type refuses a missing or unknown name). */
const actions = {
  entered: ({ context }: Args, params: { state: AgentStateName }) => (context.host as AgentRuntime).entered(params.state),
  deliberate: stage(deliberate),
  parse: stage(parse),
  validate: stage(validate),
  repair: stage(repair),
  requestApproval: stage((run, _config, port) => openCallGate(run, port)),
  dispatch: stage(dispatch),
  requestResultApproval: stage((run, config, port) => checkApprovals(RESULT_GATE, run, config, port)),
  observe: stage(observe),
  finish: (args: Args) => {
    const host = hostOf(args);
    const run = runOf(host);
    host.finishRun(run, finish(run, host.config, host.aborted));
  },
  fail: (args: Args) => {
    const host = hostOf(args);
    const run = runOf(host);
    host.finishRun(run, fail(run, host.config));
  },
  nudge: (args: Args) => nudge(runOf(hostOf(args))),
} satisfies Required<NonNullable<Implementations['actions']>>;

/** Lifts a guard into the form XState calls. */
const lift =
  (guard: Guard) =>
  (args: Args): boolean => {
    const host = hostOf(args);
    return guard(runOf(host), host.config, host);
  };

/** Every guard the machine names, as a question about the run (the type refuses a missing or unknown name). */
const providedGuards = Object.fromEntries(Object.entries(guards).map(([name, guard]) => [name, lift(guard)])) as {
  [K in keyof typeof guards]: (args: Args) => boolean;
} satisfies Required<NonNullable<Implementations['guards']>>;

/** The agent machine with troupe's stages filled in (XState's own view, for tools and tests). */
export const providedAgentMachine: AgentMachine = agentMachine.provide({ actions, guards: providedGuards });

/** The provided machine compiled for stepping: one table serves every agent. */
export const agentStepper: FlatMachine<AgentMachineContext> = compileFlatMachine(providedAgentMachine);
