import { Budget, type BudgetLimits, type BudgetRefusal, type Spend } from './budget.js';

/**
 * Where a shared budget's counters live and its refusals are decided (Redis, for a scene run on
 * workers). Each call is atomic there, whatever the number of processes.
 */
export type BudgetAuthority = {
  /** Refuses (and stays refusing) or charges `spend`, in one step. */
  spend(spend: Spend): Promise<BudgetRefusal | undefined>;
  /** Counts what was spent after the fact (a model call's tokens and cost). */
  charge(spend: Spend): Promise<void>;
  /** True exactly once, in one process, after the budget is exhausted: that process announces it. */
  takeAnnouncement(): Promise<boolean>;
  /** The first refusal, once any process found the budget exhausted. */
  exhausted(): Promise<BudgetRefusal | undefined>;
};

/** A shared budget's answer at a checkpoint: nothing (it fits, and was charged), or its refusal and whether this process announces it. */
export type SharedVerdict = { budget: Budget; refusal: BudgetRefusal; announce: boolean } | undefined;

/**
 * A budget shared with other processes. Its checkpoints ask the authority (one round trip) instead
 * of deciding here, so the limits hold across processes exactly; the counters here are this
 * process's share, for its snapshots. A refusal, once heard, is kept: every later check here
 * refuses at once, with the same reason.
 */
export class SharedBudget extends Budget {
  readonly authority: BudgetAuthority;

  constructor(name: string, limits: BudgetLimits, authority: BudgetAuthority) {
    super(name, limits);
    this.authority = authority;
  }

  /** Refuses only once the authority has: the fit itself is decided there (`spendShared`). */
  override refuse(): BudgetRefusal | undefined {
    return this.refusal;
  }

  /** Counts here, and at the authority (without waiting: it is counted, never refused). */
  override charge(spend: Spend): void {
    super.charge(spend);
    void this.authority.charge(spend).catch(() => undefined);
  }

  /** The authority decides who announces. */
  override takeAnnouncement(): boolean {
    return false;
  }

  /** Spends at the authority: charged there and counted here, or refused (and the refusal kept). */
  async spendShared(spend: Spend): Promise<SharedVerdict> {
    if (this.refusal !== undefined) return { budget: this, refusal: this.refusal, announce: false };
    const refusal = await this.authority.spend(spend);
    if (refusal === undefined) {
      super.charge(spend);
      return undefined;
    }
    this.keep(refusal);
    return { budget: this, refusal, announce: await this.authority.takeAnnouncement() };
  }

  /** Takes a refusal heard from the authority (another process exhausted the budget). */
  keep(refusal: BudgetRefusal): void {
    this.refusal ??= { ...refusal };
    this.announced = true;
  }
}

/** The shared budget among `budgets`, if any (a short list: the agent's, its member's, the scene's). */
export function sharedBudgetOf(budgets: readonly Budget[]): SharedBudget | undefined {
  for (const budget of budgets) if (budget instanceof SharedBudget) return budget;
  return undefined;
}
