import { missingPackage } from '../errors.js';
import { failure, success, type Outcome } from '../outcome.js';
import type { RedisBridge } from '../redis/bridge.js';
import type { RedisSubscription } from '../redis/subscribe.js';

/** `troupe/redis`, loaded only when `--redis` is given: it needs the optional `ioredis` package. */
type RedisModule = typeof import('../redis/index.js');

/** Loads `troupe/redis`; a host without `ioredis` is told what to install. */
async function loadRedis(): Promise<Outcome<RedisModule, string>> {
  try {
    return success(await import('../redis/index.js'));
  } catch (error) {
    if (missingPackage(error) === 'ioredis') return failure('--redis needs the ioredis package: npm install ioredis');
    throw error;
  }
}

/** The workers' runtime, loaded only for `--workers` and `troupe worker`: it needs `ioredis` too. */
export type WorkersModule = typeof import('../redis/workers/index.js');

/** Loads the workers' runtime; a host without `ioredis` is told what to install. */
export async function loadWorkers(flag: string): Promise<Outcome<WorkersModule, string>> {
  try {
    return success(await import('../redis/workers/index.js'));
  } catch (error) {
    if (missingPackage(error) === 'ioredis') return failure(`${flag} needs the ioredis package: npm install ioredis`);
    throw error;
  }
}

/** Opens the bridge `troupe run --redis` sends the scene's events through; a problem as one line. */
export async function openSceneBridge(url: string, scene: string, stream: string | undefined, note: (line: string) => void): Promise<Outcome<RedisBridge, string>> {
  const redis = await loadRedis();
  if (!redis.ok) return redis;
  try {
    return success(
      await redis.value.openRedisBridge({
        url,
        scene,
        ...(stream !== undefined && { stream }),
        onNotice: (line) => note(`troupe: ${line}`),
        onError: (error) => note(`troupe: ${error.message}`),
      }),
    );
  } catch (error) {
    return failure(`--redis: ${(error as Error).message}`);
  }
}

/** Follows a scene's stream for `troupe inspect --redis`; a problem as one line. */
export async function followSceneStream(url: string, scene: string | undefined, stream: string | undefined, note: (line: string) => void): Promise<Outcome<RedisSubscription, string>> {
  const redis = await loadRedis();
  if (!redis.ok) return redis;
  try {
    return success(
      await redis.value.subscribeRedis({
        url,
        ...(scene !== undefined && { scene }),
        ...(stream !== undefined && { stream }),
        onNotice: (line) => note(`troupe inspect: ${line}`),
        onError: (error) => note(`troupe inspect: ${error.message}`),
      }),
    );
  } catch (error) {
    return failure(`--redis: ${(error as Error).message}`);
  }
}
