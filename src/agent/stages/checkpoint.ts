import type { AgentConfig } from '../agent-config.js';
import { SharedBudget, sharedBudgetOf, spendFrom, type Budget, type BudgetRefusal, type SharedVerdict, type Spend } from '../budget.js';
import type { RunState } from '../run/run-state.js';
import type { StageEvent, StagePort } from './stage-port.js';

/**
 * Spends from the agent's budgets at a checkpoint (before a model call, before a round's tool
 * calls). When one refuses, the run ends with `budget` (announced once per budget on the bus)
 * before anything of the checkpoint starts. Returns whether it refused, or, with a budget shared
 * across processes, the promise of its verdict: the stage waits for it (`port.wait`) and hands
 * it to `budgetVerdict`.
 */
export function refusedByBudget(run: RunState, config: AgentConfig, port: StagePort, spend: Spend): boolean | Promise<SharedVerdict> {
  const { budgets } = config;
  if (budgets.length === 0) return false;
  const shared = sharedBudgetOf(budgets);
  if (shared !== undefined) return spendWithShared(run, port, budgets, shared, spend);
  const budget = spendFrom(budgets, spend);
  if (budget === undefined) return false;
  port.send(refuse(run, port, budget, budget.exhausted!, budget.takeAnnouncement()));
  return true;
}

/**
 * What a shared budget's verdict means for the run: nothing (the checkpoint's work goes on; the
 * other budgets are charged now) or the end of the run with `budget`.
 */
export function budgetVerdict(verdict: SharedVerdict, run: RunState, config: AgentConfig, port: StagePort, spend: Spend): StageEvent | undefined {
  if (verdict === undefined) {
    for (const budget of config.budgets) if (!(budget instanceof SharedBudget)) budget.charge(spend);
    return undefined;
  }
  return refuse(run, port, verdict.budget, verdict.refusal, verdict.announce);
}

/** The local budgets refuse at once; the shared one is asked only when they all fit, and they are charged once it agrees. */
function spendWithShared(run: RunState, port: StagePort, budgets: readonly Budget[], shared: SharedBudget, spend: Spend): true | Promise<SharedVerdict> {
  for (const budget of budgets) {
    const refusal = budget.refuse(spend);
    if (refusal === undefined) continue;
    port.send(refuse(run, port, budget, refusal, budget.takeAnnouncement()));
    return true;
  }
  return shared.spendShared(spend);
}

function refuse(run: RunState, port: StagePort, budget: Budget, refusal: BudgetRefusal, announce: boolean): StageEvent {
  run.budgetRefusal = refusal;
  run.error = refusal.message;
  if (announce) {
    const { message, kind, limit, used } = refusal;
    run.cause = port.publish('budget.exhausted', { budget: budget.name, kind, limit, used, message }).id;
  }
  return 'budget.exhausted';
}
