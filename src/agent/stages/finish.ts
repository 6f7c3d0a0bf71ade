import type { RunReason } from '../../bus/event-data.js';
import type { AgentConfig } from '../agent-config.js';
import type { RoundCall, RunState } from '../run/run-state.js';
import { guards } from './guards.js';
import { recordCalls } from './observe.js';

/** Why a run that reached `done` ended: final answer, max rounds, its turn, a budget, or an abort. */
export function finish(run: RunState, config: AgentConfig, aborted: boolean): RunReason {
  // Aborted during dispatch, or while results waited for approval: the calls ran, and the history says so.
  if (run.outcome.kind === 'calls' && run.outcome.recorded !== true && anyResult(run.outcome.calls)) recordCalls(run);
  if (aborted) return 'aborted';
  if (run.budgetRefusal !== undefined) return 'budget';
  if (guards.turnOver(run)) return 'turn_ended';
  if (run.nudging) return 'max_rounds';
  return 'final_answer';
}

function anyResult(calls: readonly RoundCall[]): boolean {
  for (let index = 0; index < calls.length; index++) if (calls[index]!.result !== undefined) return true;
  return false;
}

/** Why a run that reached `failed` ended, named in `run.error`. */
export function fail(run: RunState, config: AgentConfig): RunReason {
  if (run.error === undefined) {
    const last = run.lastIssues?.[0]?.message;
    run.error =
      `the model made ${run.corrections} invalid rounds in a row (maxCorrections ${config.maxCorrections})` +
      (last !== undefined ? `; last problem: ${last}` : '');
  }
  return 'error';
}

/** Marks the next deliberation as the final-answer nudge. */
export function nudge(run: RunState): void {
  run.nudging = true;
}
