import { randomUUID } from 'node:crypto';
import { Budget, BUDGET_ORDER, budgetRefusal, type BudgetKind, type BudgetLimits, type BudgetRefusal, type BudgetSnapshot, type BudgetUsage, type Spend } from '../agent/budget.js';
import { ConfigError, errorMessage } from '../errors.js';
import { roundUsd } from '../llm/prices.js';
import { defineBudgetScripts, type BudgetClient } from './budget-scripts.js';
import { isConnectionError, openRedis, type OpenedRedis, type RedisConnection } from './connect.js';
import { RedisError } from './redis-error.js';

export type RedisBudgetOptions = RedisConnection & {
  /** The scene the budget belongs to: its hash is `troupe:<scene>:budget` unless `key` says otherwise. */
  scene: string;
  /** The budget's name in refusals (default: the scene's). */
  name?: string;
  /** The hash's key, instead of the one `scene` gives. */
  key?: string;
  /** The same in every process: the first to open the budget records them, the others must agree. */
  limits: BudgetLimits;
};

/**
 * A `Budget` whose counters live in Redis, shared by every process of a scene. Same limits, same
 * rules, same sticky refusal and messages as `Budget`, checked and counted atomically in one Lua
 * script. Wall time runs on Redis's clock from the first check any process makes.
 *
 * Every method is one round trip. A call made while the connection is down waits for it to come
 * back and is sent again; a call whose reply was lost is answered from what Redis kept of it (for
 * a minute), never counted twice.
 */
export type RedisBudget = {
  readonly name: string;
  readonly key: string;
  readonly limits: Readonly<BudgetLimits>;
  /** Refuses (and stays refusing) or charges `spend`, atomically: `Budget.refuse` then `charge`. */
  spend(spend: Spend): Promise<BudgetRefusal | undefined>;
  /** `Budget.refuse`: whether `spend` fits, without charging it (a refusal is sticky all the same). */
  refuse(spend: Spend): Promise<BudgetRefusal | undefined>;
  /** `Budget.charge`: counts what was spent, such as a model call's tokens and cost once it answered. */
  charge(spend: Spend): Promise<void>;
  /** The first refusal, once any process found the budget exhausted. */
  exhausted(): Promise<BudgetRefusal | undefined>;
  /** True exactly once, in one process, after the budget is exhausted: that process announces it. */
  takeAnnouncement(): Promise<boolean>;
  usage(): Promise<BudgetUsage>;
  snapshot(): Promise<BudgetSnapshot>;
  /** Deletes the budget's counters (a new run of the scene starts from nothing). */
  reset(): Promise<void>;
  close(): Promise<void>;
};

/**
 * Opens a shared budget. The limits are checked as `new Budget` checks them (a `ConfigError`), and
 * against those recorded in Redis by the first process: a process with other limits is refused,
 * since the budget would hold for some processes and not others.
 */
export async function openRedisBudget(options: RedisBudgetOptions): Promise<RedisBudget> {
  if (options === null || typeof options !== 'object') throw new ConfigError('openRedisBudget(options) takes an object: { url, scene, limits }');
  const { scene } = options;
  if (typeof scene !== 'string' || scene === '') throw new ConfigError('openRedisBudget needs the scene name: { url, scene, limits }');
  const name = options.name ?? scene;
  const limits = new Budget(name, options.limits).limits;
  const key = options.key ?? `troupe:${scene}:budget`;
  const recorded = JSON.stringify(Object.fromEntries(BUDGET_ORDER.filter((kind) => limits[kind] !== undefined).map((kind) => [kind, limits[kind]])));
  const opened: OpenedRedis = await openRedis(options, 'budget');
  const client: BudgetClient = defineBudgetScripts(opened.client);
  // Each call in flight listens for the connection's close (`whileConnected`): many at once is normal.
  opened.client.setMaxListeners(0);
  let closed = false;

  const send = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    for (;;) {
      if (closed) throw new ConfigError(`the Redis budget "${name}" (${key}) is closed`);
      if (opened.client.status !== 'ready') {
        await opened.untilReady(() => closed);
        continue;
      }
      try {
        return await opened.whileConnected(call());
      } catch (error) {
        if (isConnectionError(error)) {
          // The drop may not show in `status` yet: a pause, not a spin.
          await new Promise((resolve) => setTimeout(resolve, 25));
          continue;
        }
        throw new RedisError('redis_failed', `Redis at ${opened.where} refused to ${what} budget "${name}" (${key}): ${errorMessage(error).split('\n')[0]}`, { cause: error });
      }
    }
  };

  try {
    const [set, held] = (await opened.client.multi().hsetnx(key, 'limits', recorded).hget(key, 'limits').exec()) ?? [];
    if (set?.[0] != null || held?.[0] != null) throw set?.[0] ?? held?.[0];
    if (held?.[1] !== recorded) {
      throw new ConfigError(`budget "${name}" in Redis (${key}) has limits ${String(held?.[1])}, this process gives ${recorded}: every process of a scene must give the same limits (or reset() the budget first)`);
    }
  } catch (error) {
    opened.client.disconnect();
    if (error instanceof ConfigError) throw error;
    throw new RedisError('redis_failed', `Redis at ${opened.where} refused to set up budget "${name}" (${key}): ${errorMessage(error).split('\n')[0]}`, { cause: error });
  }

  const refusalOf = (text: string): BudgetRefusal | undefined => {
    if (text === '') return undefined;
    const [kind, raw, adding] = text.split('|') as [BudgetKind, string, string];
    const limit = limits[kind]!;
    const used = kind === 'costUsd' ? roundUsd(Number(raw) / 1e9) : Number(raw);
    return budgetRefusal(name, kind, limit, used, Number(adding));
  };

  const call = async (mode: 'refuse' | 'spend' | 'charge', spend: Spend): Promise<BudgetRefusal | undefined> => {
    if (spend === null || typeof spend !== 'object') throw new ConfigError(`budget "${name}": a spend is an object like { modelCalls: 1 }`);
    const tokens = spend.tokens ?? 0;
    const cost = spend.costUsd;
    const args = [
      mode,
      ...BUDGET_ORDER.map((kind) => (limits[kind] === undefined ? '' : String(limits[kind]))),
      String(count(spend.modelCalls, 'modelCalls')),
      String(count(spend.toolCalls, 'toolCalls')),
      String(Number.isFinite(tokens) && tokens > 0 ? tokens : 0),
      spend.estimated === true ? '1' : '0',
      cost !== undefined && Number.isFinite(cost) && cost >= 0 ? String(Math.round(cost * 1e9)) : '',
    ];
    // One id per call, kept with its reply: a resend after a lost reply is not counted again.
    const done = `${key}:done:${randomUUID()}`;
    const reply = await send(mode, () => client.troupeBudgetSpend(key, done, ...args));
    return refusalOf(reply.slice(1));
  };

  const read = async (): Promise<{ now: number; fields: Map<string, string> }> => {
    const [now, flat] = await send('read', () => client.troupeBudgetRead(key));
    const fields = new Map<string, string>();
    for (let index = 0; index + 1 < flat.length; index += 2) fields.set(flat[index]!, flat[index + 1]!);
    return { now, fields };
  };

  const usageOf = ({ now, fields }: { now: number; fields: Map<string, string> }): BudgetUsage => {
    const startedAt = fields.get('startedAt');
    const usage: BudgetUsage = {
      modelCalls: Number(fields.get('modelCalls') ?? 0),
      tokens: Number(fields.get('tokens') ?? 0),
      toolCalls: Number(fields.get('toolCalls') ?? 0),
      wallMs: startedAt === undefined ? 0 : now - Number(startedAt),
    };
    if (fields.get('estimated') === '1') usage.estimatedTokens = true;
    if (fields.has('costed') || limits.costUsd !== undefined) usage.costUsd = roundUsd(Number(fields.get('costNanos') ?? 0) / 1e9);
    return usage;
  };

  return {
    name,
    key,
    limits,
    spend: (spend) => call('spend', spend),
    refuse: (spend) => call('refuse', spend),
    charge: async (spend) => void (await call('charge', spend)),
    exhausted: async () => refusalOf((await read()).fields.get('refusal') ?? ''),
    takeAnnouncement: async () => (await send('announce', () => client.troupeBudgetAnnounce(key))) === 1,
    usage: async () => usageOf(await read()),
    async snapshot() {
      const state = await read();
      const snapshot: BudgetSnapshot = { name, ...usageOf(state), announced: state.fields.get('announced') === '1' };
      const refusal = refusalOf(state.fields.get('refusal') ?? '');
      if (refusal !== undefined) snapshot.refusal = refusal;
      return snapshot;
    },
    async reset() {
      await send('reset', () => opened.client.multi().del(key).hset(key, 'limits', recorded).exec());
    },
    async close() {
      if (closed) return;
      closed = true;
      await opened.client.quit().catch(() => undefined);
      opened.client.disconnect();
    },
  };

  function count(value: number | undefined, kind: string): number {
    if (value === undefined) return 0;
    if (!Number.isFinite(value) || value < 0) throw new ConfigError(`budget "${name}": ${kind} to spend must be a finite number ≥ 0, got ${String(value)}`);
    return value;
  }
}

/**
 * `spendFrom` with a shared budget among the budgets: this process's own budgets are asked first,
 * in order, then the shared one (atomically, in Redis); the first refusal wins and nothing is
 * charged anywhere. One round trip.
 */
export async function spendFromShared(local: readonly Budget[], shared: RedisBudget, spend: Spend): Promise<BudgetRefusal | undefined> {
  for (const budget of local) {
    const refusal = budget.refuse(spend);
    if (refusal !== undefined) return refusal;
  }
  const refusal = await shared.spend(spend);
  if (refusal !== undefined) return refusal;
  for (const budget of local) budget.charge(spend);
  return undefined;
}
