import type { ToolCall } from '../../protocol/types.js';
import { freezeArgs } from '../../tools/freeze-args.js';
import { validateCalls } from '../../tools/validate-calls.js';
import type { AgentConfig } from '../agent-config.js';
import type { RepairedNote } from '../observation-text.js';
import type { RoundCall, RunState } from '../run/run-state.js';
import { CALL_GATE, checkApprovals } from './approval-gate.js';
import { reportMalformed } from './parse.js';
import type { StagePort } from './stage-port.js';

/** Checks names and arguments of the round's calls; marks the calls that need approval. */
export function validate(run: RunState, config: AgentConfig, port: StagePort): void {
  const calls = run.parsed!.calls;
  const outcome = validateCalls(calls, validationOptions(config));
  if (!outcome.ok) {
    const problem = outcome.problem;
    if (problem.kind === 'malformed') {
      reportMalformed(run, port, problem.problem);
    } else {
      const rejection = problem.rejection;
      run.cause = port.publish('tool.rejected', rejection).id;
      run.outcome = { kind: 'rejected', rejection, callCount: calls.length };
      run.lastIssues = rejection.issues;
    }
    return;
  }
  acceptCalls(run, config, port, outcome.value, undefined);
}

/** What `validateCalls` needs of the agent. */
export function validationOptions(config: AgentConfig): Parameters<typeof validateCalls>[1] {
  const { registry, allowed, limits } = config;
  return allowed === undefined ? { registry, limits } : { registry, limits, allowed };
}

/** Publishes `action.parsed` for the validated calls and makes them the round's, approvals checked. */
export function acceptCalls(run: RunState, config: AgentConfig, port: StagePort, validated: ToolCall[], repaired: RepairedNote | undefined): void {
  // Frozen from here on: the arguments a subscriber, a predicate or an approver sees are the ones that run.
  const calls = validated.map((call) => ({ ...call, args: freezeArgs(call.args) }));
  run.cause = port.publish('action.parsed', {
    calls: calls.map(({ callId, name, args }) => ({ callId, name, args })),
  }).id;
  const entries: RoundCall[] = calls.map((call) => ({ call }));
  run.outcome = repaired === undefined ? { kind: 'calls', calls: entries } : { kind: 'calls', calls: entries, repaired };
  checkApprovals(CALL_GATE, run, config, port);
}
