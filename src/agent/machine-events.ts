import type { AgentMachineEvent, AgentStateName } from '../../machines/agent.machine.js';
import type { TroupeEvents } from '../bus/events.js';

/** The machine's events carry no data: one frozen object each, shared by every agent. */
export const EVENTS = Object.freeze(
  Object.fromEntries(
    (
      [
        'run', 'model.responded', 'model.failed', 'repair.settled', 'approval.settled', 'dispatch.settled', 'results.settled',
        'dispatch.failed', 'budget.exhausted', 'aborted',
      ] as const
    ).map((type) => [type, Object.freeze({ type })]),
  ),
) as { readonly [T in AgentMachineEvent['type']]: Readonly<Extract<AgentMachineEvent, { type: T }>> };

const STATE_NAMES: readonly AgentStateName[] = [
  'idle', 'deliberating', 'parsing', 'validating', 'repairing', 'awaitingApproval', 'dispatching', 'awaitingResultApproval', 'observing', 'done', 'failed',
];

/**
 * Every `agent.state` payload, made once and frozen: a scene of many agents publishes several
 * per turn, and a shared immutable object costs no allocation.
 */
export const STATE_CHANGES = Object.freeze(
  Object.fromEntries(STATE_NAMES.map((from) => [from, Object.freeze(Object.fromEntries(STATE_NAMES.map((to) => [to, Object.freeze({ from, to })])))])),
) as Readonly<Record<AgentStateName, Readonly<Record<AgentStateName, TroupeEvents['agent.state']>>>>;
