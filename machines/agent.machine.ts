import { setup } from 'xstate';

/**
 * The agent cycle as a statechart: deliberate → parse → validate → dispatch → observe, plus
 * repair of rejected calls, approval of calls and of their results, done and failed.
 *
 * Pure by design: it knows nothing of models, XML or tools. Each state's entry names an action
 * (`deliberate`, `parse`, …) and each branch a guard; `src/agent/` fills them in with
 * `agentMachine.provide(...)`. The two asynchronous stages (deliberate, dispatch) start their work
 * in an entry action and report back with an event, so a run creates no child actors (repair and
 * the approvals report back the same way, as they may wait on a host function or a human); the
 * synchronous stages (parse, validate, observe) finish inside the macrostep that entered them.
 */

/** The machine's state names, as `agent.state` events report them. */
export type AgentStateName =
  | 'idle'
  | 'deliberating'
  | 'parsing'
  | 'validating'
  | 'repairing'
  | 'awaitingApproval'
  | 'dispatching'
  | 'awaitingResultApproval'
  | 'observing'
  | 'done'
  | 'failed';

/** What the runtime tells the machine. */
export type AgentMachineEvent =
  | { type: 'run' }
  | { type: 'model.responded' }
  | { type: 'model.failed' }
  | { type: 'repair.settled' }
  | { type: 'approval.settled' }
  | { type: 'dispatch.settled' }
  | { type: 'results.settled' }
  | { type: 'dispatch.failed' }
  | { type: 'budget.exhausted' }
  | { type: 'aborted' };

/**
 * The machine's context: only a handle on the runtime that implements the stages. The machine
 * never looks inside it; provided actions and guards (which XState hands the context, not the
 * actor) use it to reach their agent.
 */
export type AgentMachineContext = { readonly host: object };

const placeholder = (): void => {};
const never = (): boolean => false;

const entered = (state: AgentStateName) => ({ type: 'entered', params: { state } }) as const;

export const agentMachine = setup({
  types: {
    context: {} as AgentMachineContext,
    input: {} as AgentMachineContext,
    events: {} as AgentMachineEvent,
  },
  actions: {
    /** Reports the state just entered (the runtime publishes `agent.state`). */
    entered: (_, _params: { state: AgentStateName }) => {},
    deliberate: placeholder,
    parse: placeholder,
    validate: placeholder,
    repair: placeholder,
    requestApproval: placeholder,
    dispatch: placeholder,
    requestResultApproval: placeholder,
    observe: placeholder,
    finish: placeholder,
    fail: placeholder,
    /** Marks the next deliberation as the final-answer nudge. */
    nudge: placeholder,
  },
  guards: {
    /** The output was malformed (or empty): go straight to observing. */
    malformed: never,
    /** The output holds calls to check. */
    hasCalls: never,
    /** The deliberation was the final-answer nudge: its calls never run. */
    nudged: never,
    /** Validation rejected the block. */
    rejected: never,
    /** Validation rejected one call and the agent has a repair it has not tried this turn. */
    repairable: never,
    /** At least one call waits for the host's approval. */
    needsApproval: never,
    /** Approval left at least one call to run. */
    anyApproved: never,
    /** At least one completed call's result waits for the host's approval. */
    needsResultApproval: never,
    /** Consecutive bad turns reached `maxCorrections`. */
    correctionsExhausted: never,
    /** The run was aborted while a synchronous stage ran. */
    abortRequested: never,
    /** The run is a scene turn and its rounds are spent: the agent yields until its next turn. */
    turnOver: never,
    /** `maxRounds` deliberations are spent: one more, without tools, asks for the answer. */
    roundsExhausted: never,
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => input,
  initial: 'idle',
  states: {
    idle: {
      entry: entered('idle'),
      on: { run: 'deliberating' },
    },
    deliberating: {
      entry: [entered('deliberating'), 'deliberate'],
      on: {
        'model.responded': 'parsing',
        'model.failed': 'failed',
        'budget.exhausted': 'done',
        aborted: 'done',
      },
    },
    parsing: {
      entry: [entered('parsing'), 'parse'],
      always: [
        { guard: 'nudged', target: 'done' },
        { guard: 'malformed', target: 'observing' },
        { guard: 'hasCalls', target: 'validating' },
        { target: 'done' },
      ],
    },
    validating: {
      entry: [entered('validating'), 'validate'],
      always: [
        { guard: 'repairable', target: 'repairing' },
        { guard: 'rejected', target: 'observing' },
        { guard: 'needsApproval', target: 'awaitingApproval' },
        { target: 'dispatching' },
      ],
    },
    // One attempt per turn: a repaired block is validated again, and whatever still fails is observed.
    repairing: {
      entry: [entered('repairing'), 'repair'],
      on: {
        'repair.settled': [
          { guard: 'rejected', target: 'observing' },
          { guard: 'needsApproval', target: 'awaitingApproval' },
          { target: 'dispatching' },
        ],
        aborted: 'done',
      },
    },
    awaitingApproval: {
      entry: [entered('awaitingApproval'), 'requestApproval'],
      on: {
        'approval.settled': [{ guard: 'anyApproved', target: 'dispatching' }, { target: 'observing' }],
        aborted: 'done',
      },
    },
    dispatching: {
      entry: [entered('dispatching'), 'dispatch'],
      on: {
        'dispatch.settled': [{ guard: 'needsResultApproval', target: 'awaitingResultApproval' }, { target: 'observing' }],
        'dispatch.failed': 'failed',
        'budget.exhausted': 'done',
        aborted: 'done',
      },
    },
    awaitingResultApproval: {
      entry: [entered('awaitingResultApproval'), 'requestResultApproval'],
      on: {
        'results.settled': 'observing',
        aborted: 'done',
      },
    },
    observing: {
      entry: [entered('observing'), 'observe'],
      always: [
        { guard: 'abortRequested', target: 'done' },
        { guard: 'correctionsExhausted', target: 'failed' },
        { guard: 'turnOver', target: 'done' },
        { guard: 'roundsExhausted', target: 'deliberating', actions: 'nudge' },
        { target: 'deliberating' },
      ],
    },
    // done and failed rest rather than end, so one long-lived actor serves every run.
    done: {
      entry: [entered('done'), 'finish'],
      on: { run: 'deliberating' },
    },
    failed: {
      entry: [entered('failed'), 'fail'],
      on: { run: 'deliberating' },
    },
  },
});

/** The machine's type, for `provide` in `src/agent/`. */
export type AgentMachine = typeof agentMachine;
