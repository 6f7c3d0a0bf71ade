import type { AgentConfig } from '../agent-config.js';
import { isUnreadReply, type RunState } from '../run/run-state.js';
import type { StagePort } from './stage-port.js';

/** A guard of the machine: a question about the run, answered from its state and the config. */
export type Guard = (run: RunState, config: AgentConfig, port: StagePort) => boolean;

/**
 * The machine's guards, by the names the machine gives them. The run's signal is the one live
 * thing a guard reads (through the port).
 */
export const guards = {
  nudged: (run) => run.nudging,
  malformed: (run) => isUnreadReply(run.outcome),
  hasCalls: (run) => (run.parsed?.calls.length ?? 0) > 0,
  rejected: (run) => run.outcome.kind === 'rejected' || run.outcome.kind === 'malformed',
  // Once per round by construction: `repairing` never returns to `validating`. A `tool.rejected`
  // subscriber may have aborted the run: a repair then would only spend a model call on a run that is over.
  repairable: (run, config, port) => run.outcome.kind === 'rejected' && config.repair !== undefined && !port.aborted,
  needsApproval: (run) => run.outcome.kind === 'calls' && run.outcome.calls.some((entry) => entry.approval !== undefined),
  anyApproved: (run) =>
    run.outcome.kind === 'calls' && run.outcome.calls.some((entry) => entry.approval === undefined || (entry.approval.status === 'decided' && entry.approval.approved)),
  needsResultApproval: (run, config) => {
    if (run.outcome.kind !== 'calls' || !config.gated.results) return false;
    for (const entry of run.outcome.calls) {
      if (entry.result?.status !== 'completed') continue;
      const needs = config.registry.get(entry.call.name)?.needsResultApproval;
      if (needs !== undefined && needs !== false) return true;
    }
    return false;
  },
  correctionsExhausted: (run, config) => run.corrections >= config.maxCorrections,
  abortRequested: (_run, _config, port) => port.aborted,
  turnOver: (run) => run.roundLimit !== undefined && run.round >= run.roundLimit && run.observation !== undefined,
  roundsExhausted: (run, config) => run.round >= config.maxRounds,
} satisfies Record<string, Guard>;
