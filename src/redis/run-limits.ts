import type { LimitFunction } from 'p-limit';
import { SharedBudget, type BudgetAuthority, type BudgetLimits } from '../agent/budget.js';
import type { SceneHooks } from '../scene/scene-hooks.js';
import type { RedisConnection } from './connect.js';
import { openRedisBudget, type RedisBudget } from './redis-budget.js';
import { openRedisLimiter, type RedisLimiter } from './redis-limiter.js';
import { sharedLimit } from './shared-limit.js';

/**
 * A run's scene budget and scene-wide limits, kept in Redis under the run's name
 * (`troupe:<name>:budget`, `troupe:<name>:limits:*`) so that they hold across every process of the
 * run: the coordinator's scene and each worker's are built with `hooks`. Connections open on first
 * use: a scene with neither a budget nor a model opens none.
 */
export class SharedLimits {
  /** The scene's budget, once the scene made one. */
  budget: SharedBudget | undefined;
  private readonly connection: RedisConnection;
  private readonly name: string;
  private readonly onNotice: ((message: string) => void) | undefined;
  private limiter: Promise<RedisLimiter> | undefined;
  private opened: Promise<RedisBudget> | undefined;

  constructor(connection: RedisConnection, name: string, onNotice?: (message: string) => void) {
    this.connection = { url: connection.url, ...(connection.connectTimeoutMs !== undefined && { connectTimeoutMs: connection.connectTimeoutMs }) };
    this.name = name;
    this.onNotice = onNotice;
  }

  get hooks(): Pick<SceneHooks, 'budget' | 'limit'> {
    return {
      budget: (budget, limits) => (this.budget = new SharedBudget(budget, limits, this.authority(budget, limits))),
      limit: (key, concurrency) => this.limit(key, concurrency),
    };
  }

  /** Closes what was opened. */
  async close(): Promise<void> {
    const [limiter, budget] = await Promise.all([this.limiter?.catch(() => undefined), this.opened?.catch(() => undefined)]);
    await Promise.all([limiter?.close(), budget?.close()]);
  }

  private limit(key: string, concurrency: number): LimitFunction {
    const connection = { ...this.connection, scene: this.name, ...(this.onNotice !== undefined && { onNotice: this.onNotice }) };
    const opening = (this.limiter ??= openRedisLimiter(connection));
    return sharedLimit({ acquire: async (slot, limit, options) => (await opening).acquire(slot, limit, options) }, key, concurrency);
  }

  private authority(budget: string, limits: BudgetLimits): BudgetAuthority {
    const opening = (this.opened = openRedisBudget({ ...this.connection, scene: this.name, name: budget, limits }));
    // Heard at the first use, where a checkpoint reports it.
    opening.catch(() => undefined);
    return {
      spend: async (spend) => (await opening).spend(spend),
      charge: async (spend) => (await opening).charge(spend),
      takeAnnouncement: async () => (await opening).takeAnnouncement(),
      exhausted: async () => (await opening).exhausted(),
    };
  }
}
