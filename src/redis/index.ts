/**
 * A scene's bus across processes on Redis streams: `import { bridgeToRedis, subscribeRedis } from 'troupe/redis'`.
 * Needs the `ioredis` package (an optional peer dependency) and Redis 6.2 or later. See docs/distributed.md.
 */
export { bridgeToRedis, openRedisBridge } from './bridge.js';
export type { RedisBridge, RedisBridgeOptions, Retention } from './bridge.js';
export { subscribeRedis } from './subscribe.js';
export type { RedisSubscription, RedisSubscriptionOptions } from './subscribe.js';
export type { RedisConnection } from './connect.js';
export { RedisError } from './redis-error.js';
export type { RedisErrorCode } from './redis-error.js';
export { streamKeyOf } from './stream-header.js';
export type { StreamHeader } from './stream-header.js';
export { openCoordinator, runWorker, partitionOf, ownerOf, buildWithHooks } from './workers/index.js';
export type { Coordinator, CoordinatorOptions, WorkerOptions, WorkerResult, PartReport, RunRecord } from './workers/index.js';
export { openRedisLimiter, DEFAULT_LEASE_MS, DEFAULT_POLL_MS } from './redis-limiter.js';
export type { RedisLimiter, RedisLimiterOptions, RedisLease } from './redis-limiter.js';
export { sharedLimit } from './shared-limit.js';
export { openRedisBudget, spendFromShared } from './redis-budget.js';
export type { RedisBudget, RedisBudgetOptions } from './redis-budget.js';
