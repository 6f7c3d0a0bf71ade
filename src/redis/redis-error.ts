import { TroupeError, type TroupeErrorCode } from '../errors.js';

/** The codes a `RedisError` carries: one per way a Redis connection or stream can be refused. */
export type RedisErrorCode = Extract<TroupeErrorCode, `redis_${string}`>;

/**
 * Something about Redis troupe cannot work with: it cannot be reached (`redis_unreachable`), it
 * refused the credentials (`redis_auth_failed`), it is older than 6.2 (`redis_too_old`), the
 * stream belongs to another scene or catalogue version (`redis_stream_mismatch`), a run across
 * workers cannot be joined (`redis_run_mismatch`), Redis came back without a run's state after a
 * reconnection (`redis_run_lost`), or a bridge gave up on it after starting (`redis_failed`).
 * The message is one line and names the address with its password hidden.
 */
export class RedisError extends TroupeError {
  declare readonly code: RedisErrorCode;

  constructor(code: RedisErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
