import type { Logger } from 'pino';
import type { AgentStateName } from '../../machines/agent.machine.js';
import type { Args } from '../bus/event-data.js';
import { TroupeError } from '../errors.js';
import type { PendingApproval, PendingResultApproval } from './agent-options.js';
import type { RoundCall, RunState } from './run/run-state.js';
import { CALL_GATE, decide, pendingEntries, RESULT_GATE, type Gate } from './stages/approval-gate.js';
import type { StagePort } from './stages/stage-port.js';
import { stableHash } from './stable-key.js';

/** What the host's approval controls need of the agent at the moment they are used. */
type Controlled = {
  run: RunState | undefined;
  state: AgentStateName;
  aborted: boolean;
  port: StagePort;
  logger: Logger;
  agent: string;
};

/**
 * The host's side of the approval gates: what waits for a decision, and the decisions. A decision
 * is taken only for a request that was published and is still waiting, in a run that is not
 * aborted, and (when the host names them) for exactly the arguments or output that were shown.
 */
export const approvalControls = {
  pendingCalls(run: RunState | undefined, state: AgentStateName): PendingApproval[] {
    if (state !== CALL_GATE.parked) return [];
    return pendingEntries(CALL_GATE, run).map(({ call, approval }) => ({ callId: call.callId, name: call.name, args: call.args, argsHash: hashOf(approval) }));
  },

  pendingResults(run: RunState | undefined, state: AgentStateName): PendingResultApproval[] {
    if (state !== RESULT_GATE.parked) return [];
    return pendingEntries(RESULT_GATE, run).map((entry) => ({
      callId: entry.call.callId,
      name: entry.call.name,
      args: entry.call.args,
      output: entry.result?.status === 'completed' ? entry.result.output : undefined,
      outputHash: hashOf(entry.resultApproval),
    }));
  },

  approve(agent: Controlled, callId: string, options: { args?: Args; argsHash?: string }): boolean {
    const entry = waiting(agent, CALL_GATE, callId, 'approve', 'no pending approval for this call');
    if (entry === undefined) return false;
    const hash = hashOf(entry.approval);
    if (options.args !== undefined && stableHash(options.args) !== hash) return refused(agent, callId, 'approval refused: arguments differ from the request');
    if (options.argsHash !== undefined && options.argsHash !== hash) return refused(agent, callId, "approval refused: argsHash is not the request's");
    decide(CALL_GATE, agent.run!, entry, true, 'approved', true, agent.port);
    return true;
  },

  deny(agent: Controlled, callId: string, reason: unknown): boolean {
    checkReason(reason, 'deny');
    const entry = waiting(agent, CALL_GATE, callId, 'deny', 'no pending approval for this call');
    if (entry === undefined) return false;
    decide(CALL_GATE, agent.run!, entry, false, reason, true, agent.port);
    return true;
  },

  approveResult(agent: Controlled, callId: string, options: { outputHash?: string }): boolean {
    const entry = waiting(agent, RESULT_GATE, callId, 'approveResult', 'no result of this call waits for approval');
    if (entry === undefined) return false;
    if (options.outputHash !== undefined && options.outputHash !== hashOf(entry.resultApproval)) {
      return refused(agent, callId, "result approval refused: outputHash is not the request's");
    }
    decide(RESULT_GATE, agent.run!, entry, true, 'approved', true, agent.port);
    return true;
  },

  /**
   * Publishes again the requests still waiting at the gate the agent is parked at, bound to the
   * same calls and hashes: after a crash, whoever decides never saw the old requests. Returns how many.
   */
  requestAgain(agent: Controlled): number {
    const gate = agent.state === CALL_GATE.parked ? CALL_GATE : agent.state === RESULT_GATE.parked ? RESULT_GATE : undefined;
    if (gate === undefined || agent.aborted) return 0;
    let count = 0;
    for (const entry of pendingEntries(gate, agent.run)) {
      const approval = entry[gate.field];
      if (approval?.status !== 'requested') continue;
      gate.request(entry, approval.hash, agent.port);
      count++;
    }
    return count;
  },

  rejectResult(agent: Controlled, callId: string, reason: unknown): boolean {
    checkReason(reason, 'rejectResult');
    const entry = waiting(agent, RESULT_GATE, callId, 'rejectResult', 'no result of this call waits for approval');
    if (entry === undefined) return false;
    decide(RESULT_GATE, agent.run!, entry, false, reason, true, agent.port);
    return true;
  },
};

/** The call whose request `callId` names, when it is published and still waiting; else logs why not. */
function waiting(agent: Controlled, gate: Gate, callId: string, verb: string, missing: string): RoundCall | undefined {
  const entry =
    !agent.aborted && agent.state === gate.parked ? pendingEntries(gate, agent.run).find((candidate) => candidate.call.callId === callId) : undefined;
  if (entry === undefined) agent.logger.warn({ agent: agent.agent, callId }, `${verb} ignored: ${missing}`);
  return entry;
}

function refused(agent: Controlled, callId: string, why: string): false {
  agent.logger.warn({ agent: agent.agent, callId }, why);
  return false;
}

function hashOf(approval: RoundCall['approval']): string {
  return approval?.status === 'requested' ? approval.hash : '';
}

/** A refusal's reason reaches the model and the bus as text: anything else is a host bug. */
function checkReason(reason: unknown, verb: 'deny' | 'rejectResult'): asserts reason is string {
  if (typeof reason !== 'string') {
    throw new TroupeError('invalid_config', `agent.${verb}(callId, reason): reason must be a string, got ${reason === null ? 'null' : typeof reason}`);
  }
}
