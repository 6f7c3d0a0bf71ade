import type { AgentConfig } from '../agent-config.js';
import { spendFrom, type Spend } from '../budget.js';
import type { RunState } from '../run/run-state.js';
import type { StagePort } from './stage-port.js';

/**
 * Spends from the agent's budgets at a checkpoint (before a model call, before a round's tool
 * calls). When one refuses, the run ends with `budget` (announced once per budget on the bus)
 * before anything of the checkpoint starts. Returns whether it refused.
 */
export function refusedByBudget(run: RunState, config: AgentConfig, port: StagePort, spend: Spend): boolean {
  const { budgets } = config;
  if (budgets.length === 0) return false;
  const budget = spendFrom(budgets, spend);
  if (budget === undefined) return false;
  const refusal = budget.exhausted!;
  run.budgetRefusal = refusal;
  run.error = refusal.message;
  if (budget.takeAnnouncement()) {
    const { message, kind, limit, used } = refusal;
    run.cause = port.publish('budget.exhausted', { budget: budget.name, kind, limit, used, message }).id;
  }
  port.send('budget.exhausted');
  return true;
}
