import { ConfigError } from '../errors.js';
import type { Clock } from '../bus/ids.js';
import type { BudgetKind } from '../bus/event-data.js';
import type { ModelRequest, ModelResponse, Provider, Usage } from '../llm/types.js';
import { providerPrice, pricedUsage, roundUsd, type PriceTable } from '../llm/prices.js';
import { withUsage } from './estimate-usage.js';

/** What a budget can cap. Every field is optional; an absent one is unlimited. */
export type BudgetLimits = {
  /** Model calls (each deliberation, retries not counted). */
  modelCalls?: number;
  /** Tokens reported by the provider (input + output). */
  tokens?: number;
  /** Tool calls dispatched. */
  toolCalls?: number;
  /** Wall time in ms from the budget's first use. */
  wallMs?: number;
  /** US dollars, each call's tokens at its model's price (docs/budgets.md, Prices). */
  costUsd?: number;
};

export type { BudgetKind } from '../bus/event-data.js';

/**
 * What a budget has used so far. `estimatedTokens` marks a token count that includes estimates
 * (usage a provider did not report, counted by troupe's tokenizer), and so a cost worked out from
 * them. `costUsd` is there once a priced call was charged, or when the budget caps cost.
 */
export type BudgetUsage = { modelCalls: number; tokens: number; toolCalls: number; wallMs: number; estimatedTokens?: true; costUsd?: number };

/** A budget's use as plain data, for an agent's or a scene's snapshot. */
export type BudgetSnapshot = BudgetUsage & { name: string; refusal?: BudgetRefusal; announced: boolean };

/** Why a budget refused: which limit, and how much of it was used. */
export type BudgetRefusal = { budget: string; kind: BudgetKind; limit: number; used: number; message: string };

/**
 * A spending cap shared by whoever holds it: one agent, or every agent of a scene. Checked at the
 * cycle's checkpoints (before each model call, before each turn's tool calls), never mid-call, so
 * a budget never leaves anything half-done: a turn whose calls do not all fit runs none of them.
 */
export class Budget {
  readonly name: string;
  readonly limits: Readonly<BudgetLimits>;
  private readonly clock: Clock;
  private startedAt: number | undefined;
  private modelCalls = 0;
  private tokens = 0;
  private toolCalls = 0;
  private costUsd: number | undefined;
  private estimatedTokens = false;
  protected refusal: BudgetRefusal | undefined;
  protected announced = false;

  constructor(name: string, limits: BudgetLimits, clock: Clock = Date.now) {
    if (limits === null || typeof limits !== 'object') throw new ConfigError(`budget "${name}": limits must be an object like { modelCalls: 20 }`);
    for (const [key, value] of Object.entries(limits)) {
      if (!Object.hasOwn(KINDS, key)) throw new ConfigError(`budget "${name}": unknown limit "${key}" (use ${Object.keys(KINDS).join(', ')})`);
      if (value !== undefined && (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value))) {
        throw new ConfigError(`budget "${name}": ${key} must be a finite number ≥ 0, got ${String(value)}`);
      }
    }
    this.name = name;
    this.limits = Object.freeze({ ...limits });
    this.clock = clock;
  }

  /**
   * Whether `spend` fits. Tokens and wall time are known only after the fact, so they refuse once
   * used up; calls refuse when adding them would pass the limit. A refusal is sticky: once
   * exhausted, a budget stays exhausted, so every later checkpoint gives the same clear reason.
   */
  refuse(spend: Spend): BudgetRefusal | undefined {
    if (this.refusal !== undefined) return this.refusal;
    this.startedAt ??= this.clock();
    for (const kind of BUDGET_ORDER) {
      const limit = this.limits[kind];
      if (limit === undefined) continue;
      const adding = kind === 'modelCalls' || kind === 'toolCalls' ? (spend[kind] ?? 0) : 0;
      if (adding === 0 && (kind === 'modelCalls' || kind === 'toolCalls')) continue;
      // Tokens and cost are spent by model calls only: a round the model already wrote still runs.
      if ((kind === 'tokens' || kind === 'costUsd') && !(spend.modelCalls! > 0)) continue;
      const used = kind === 'wallMs' ? this.clock() - this.startedAt : kind === 'costUsd' ? (this.costUsd ?? 0) : this[kind];
      if (adding > 0 ? used + adding <= limit : used < limit) continue;
      this.refusal = budgetRefusal(this.name, kind, limit, used, adding);
      return this.refusal;
    }
    return undefined;
  }

  /** Counts what was spent (after `refuse` said it fits). */
  charge(spend: Spend): void {
    this.modelCalls += spend.modelCalls ?? 0;
    this.toolCalls += spend.toolCalls ?? 0;
    const tokens = spend.tokens ?? 0;
    if (Number.isFinite(tokens) && tokens > 0) {
      this.tokens += tokens;
      if (spend.estimated === true) this.estimatedTokens = true;
    }
    const cost = spend.costUsd;
    if (cost !== undefined && Number.isFinite(cost) && cost >= 0) this.costUsd = roundUsd((this.costUsd ?? 0) + cost);
  }

  /** The first refusal, once the budget is exhausted (it stays exhausted). */
  get exhausted(): BudgetRefusal | undefined {
    return this.refusal;
  }

  /** True exactly once after the budget is exhausted: whoever gets it publishes `budget.exhausted`. */
  takeAnnouncement(): boolean {
    if (this.refusal === undefined || this.announced) return false;
    this.announced = true;
    return true;
  }

  /** What has been used, and whether the budget is exhausted, as plain data. */
  snapshot(): BudgetSnapshot {
    const snapshot: BudgetSnapshot = { name: this.name, ...this.usage(), announced: this.announced };
    if (this.refusal !== undefined) snapshot.refusal = { ...this.refusal };
    return snapshot;
  }

  /** Takes up a snapshot's use: wall time goes on from what it had used. */
  restore(snapshot: BudgetSnapshot): void {
    this.modelCalls = snapshot.modelCalls;
    this.tokens = snapshot.tokens;
    this.toolCalls = snapshot.toolCalls;
    this.costUsd = snapshot.costUsd;
    this.estimatedTokens = snapshot.estimatedTokens === true;
    this.startedAt = snapshot.wallMs > 0 ? this.clock() - snapshot.wallMs : undefined;
    this.refusal = snapshot.refusal === undefined ? undefined : { ...snapshot.refusal };
    this.announced = snapshot.announced;
  }

  /** What has been used so far. */
  usage(): BudgetUsage {
    const wallMs = this.startedAt === undefined ? 0 : this.clock() - this.startedAt;
    const usage: BudgetUsage = { modelCalls: this.modelCalls, tokens: this.tokens, toolCalls: this.toolCalls, wallMs };
    if (this.estimatedTokens) usage.estimatedTokens = true;
    if (this.costUsd !== undefined || this.limits.costUsd !== undefined) usage.costUsd = this.costUsd ?? 0;
    return usage;
  }
}

/** What one checkpoint is about to spend, or what a model call reported (`estimated`: by troupe's tokenizer). */
export type Spend = { modelCalls?: number; toolCalls?: number; tokens?: number; estimated?: boolean; costUsd?: number };

/** What a model call's usage spends: its tokens, and its cost when priced. */
export function usageSpend(usage: Usage): Spend {
  const spend: Spend = { tokens: usage.totalTokens, estimated: usage.estimated === true };
  if (usage.costUsd !== undefined) spend.costUsd = usage.costUsd;
  return spend;
}

/** The order a budget checks its limits in: the first exhausted one is the refusal's. */
export const BUDGET_ORDER: readonly BudgetKind[] = ['modelCalls', 'toolCalls', 'tokens', 'costUsd', 'wallMs'];

const KINDS: Record<BudgetKind, string> = {
  modelCalls: 'model calls',
  tokens: 'tokens',
  toolCalls: 'tool calls',
  wallMs: 'wall time ms',
  costUsd: 'cost USD',
};

/** A refusal as every budget words it, in one process or shared through Redis. */
export function budgetRefusal(budget: string, kind: BudgetKind, limit: number, used: number, adding: number): BudgetRefusal {
  const needing = adding > 1 ? ` (this round needs ${adding})` : '';
  return { budget, kind, limit, used, message: `budget "${budget}" exhausted: ${KINDS[kind]} ${used}/${limit}${needing}` };
}

/** Spends from every budget, or from none: the first refusing budget wins and nothing is charged. */
export function spendFrom(budgets: readonly Budget[], spend: Spend): Budget | undefined {
  // Indexed: every checkpoint of every run passes here (see `chargeAll`).
  for (let index = 0; index < budgets.length; index++) {
    if (budgets[index]!.refuse(spend) !== undefined) return budgets[index];
  }
  chargeAll(budgets, spend);
  return undefined;
}

/**
 * Charges every budget. An indexed loop: a `for…of` the engine does not inline allocates an
 * iterator result per budget, and this runs at every checkpoint and model answer.
 */
export function chargeAll(budgets: readonly Budget[], spend: Spend): void {
  for (let index = 0; index < budgets.length; index++) budgets[index]!.charge(spend);
}

/** The spend of one model call, shared: checkpoints pass it on every deliberation. */
export const ONE_MODEL_CALL: Spend = Object.freeze({ modelCalls: 1 });

/**
 * A model call outside the cycle (a repair's, a summary's): refused before anything is sent when
 * its signal is aborted, a budget has no model call left (the error starts with `refusal`), or a
 * budget caps cost and `prices` has none for the provider's model; its tokens and cost charged to
 * the budgets once it answers.
 */
export async function budgetedModelCall(
  budgets: readonly Budget[],
  provider: Provider,
  request: ModelRequest,
  refusal: string,
  prices?: PriceTable,
): Promise<ModelResponse> {
  request.signal.throwIfAborted();
  const price = prices === undefined ? undefined : providerPrice(provider, prices);
  const unpriced = price === undefined && provider.spendsTokens !== false ? budgets.find((budget) => budget.limits.costUsd !== undefined) : undefined;
  if (unpriced !== undefined) throw new Error(`${refusal}${unpricedMessage(unpriced.name, provider)}`);
  const refusing = budgets.length === 0 ? undefined : spendFrom(budgets, ONE_MODEL_CALL);
  if (refusing !== undefined) throw new Error(`${refusal}${refusing.exhausted!.message}`);
  const answer = await provider.complete(request);
  let response = withUsage(answer, request, provider);
  if (response?.usage !== undefined && typeof response.usage.totalTokens === 'number') {
    if (price !== undefined) response = { ...response, usage: pricedUsage(response.usage, price) };
    const spend = usageSpend(response.usage!);
    chargeAll(budgets, spend);
  }
  return response;
}

/** Why a cost budget cannot be kept with a provider: the price table does not know its model. */
export function unpricedMessage(budget: string, provider: Pick<Provider, 'name' | 'model'>): string {
  const model = provider.model ?? provider.name;
  return (
    `budget "${budget}" caps costUsd, but there is no price for model "${model}" (provider "${provider.name}"): ` +
    `pass prices: { '${model}': { input, output } } in USD per million tokens (docs/budgets.md, Prices)`
  );
}

/** Adds a response's usage to a run's; a sum that includes an estimate is marked estimated. */
export function addUsage(total: Usage, usage: Usage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.totalTokens += usage.totalTokens;
  if (usage.estimated === true) total.estimated = true;
  if (usage.costUsd !== undefined) total.costUsd = roundUsd((total.costUsd ?? 0) + usage.costUsd);
}

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
  for (let index = 0; index < budgets.length; index++) if (budgets[index] instanceof SharedBudget) return budgets[index] as SharedBudget;
  return undefined;
}
