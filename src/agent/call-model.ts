import type { Publish } from '../bus/bus.js';
import { ProviderError, toProviderError } from '../llm/provider-error.js';
import type { ModelRequest, ModelResponse, Provider } from '../llm/types.js';
import { sleepFor } from '../tools/dispatch-calls.js';
import type { RetryPolicy } from '../tools/types.js';
import { formatWait, retryWait } from './retry-wait.js';

export type { Publish } from '../bus/bus.js';

/** Where retry jitter comes from: `Math`, or an agent's seeded generator. */
export type Randomness = { random(): number };

/**
 * An agent's `modelRetry`: a tool's retry policy, every field optional (the defaults fill in), plus
 * how long a provider's `retry-after` may be.
 */
export type ModelRetryPolicy = Partial<RetryPolicy> & {
  /** The longest `retry-after` honoured (default 60 s); a provider asking for more fails the call at once. */
  maxRetryAfterMs?: number;
};

/** The model retry policy of an agent that sets none: 3 attempts, 500 ms doubling up to 30 s, `retry-after` up to 60 s. */
// Frozen: every agent that sets no policy shares it.
export const DEFAULT_MODEL_RETRY: Required<ModelRetryPolicy> = Object.freeze({ attempts: 3, backoffMs: 500, maxBackoffMs: 30_000, maxRetryAfterMs: 60_000 });

/**
 * One deliberation's first attempt: the provider's answer, synchronously when it can give one
 * (`completeNow`, a scripted brain), else its promise. It throws or rejects as the provider does;
 * the caller hands a failure to `retryModel`. The retry is not chained here: a `.then` per call
 * would be one more promise, reaction and closure for every agent parked on its model.
 */
export function firstAttempt(provider: Provider, request: ModelRequest): ModelResponse | Promise<ModelResponse> {
  return provider.completeNow !== undefined ? provider.completeNow(request) : provider.complete(request);
}

/**
 * After the first attempt failed with `thrown`: retries retryable failures with exponential
 * backoff (or exactly the `retry-after` the provider asked for). Every failed attempt is an
 * `llm.error`; the last one is rethrown as a ProviderError for the agent to fail on.
 */
export function retryModel(
  provider: Provider,
  request: ModelRequest,
  policy: Required<ModelRetryPolicy>,
  publish: Publish,
  thrown: unknown,
  randomness: Randomness,
): Promise<ModelResponse> {
  return retryAfterFailure(request, policy, publish, thrown, 1, () => provider.complete(request), randomness);
}

/**
 * After attempt `attempt` failed with `thrown`: reports it as `llm.error` and, while the failure is
 * retryable and attempts remain, waits (the provider's `retry-after` up to `maxRetryAfterMs`, else
 * exponential backoff with jitter drawn from `randomness`: between half and all of
 * `backoffMs × 2^(attempt-1)`, capped at `maxBackoffMs`) and tries again with `next(attempt)`. A
 * `retry-after` over the cap ends the retries at once, with an `llm.error` that says so. An abort is
 * the caller's doing: nothing to report or retry.
 */
export async function retryAfterFailure<T>(
  request: ModelRequest,
  policy: Required<ModelRetryPolicy>,
  publish: Publish,
  thrown: unknown,
  attempt: number,
  next: (attempt: number) => Promise<T>,
  randomness: Randomness,
): Promise<T> {
  for (; ; attempt++) {
    let error = toProviderError(thrown, request.signal);
    if (request.signal.aborted) throw error;
    const wait = error.retryable && attempt < policy.attempts ? retryWait(error.retryAfterMs, policy.maxRetryAfterMs) : undefined;
    if (wait?.kind === 'too_long') error = tooLong(error, wait.askedMs, wait.maxMs);
    publish('llm.error', {
      round: request.round,
      kind: error.kind,
      message: error.message,
      retryable: error.retryable,
      attempt,
      ...(error.retryAfterMs !== undefined && { retryAfterMs: error.retryAfterMs }),
    });
    if (wait === undefined || wait.kind === 'too_long') throw error;
    // Jitter spreads the retries of many agents hit by one outage; a server's own wait is exact.
    const backoff = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (attempt - 1));
    await sleepFor(wait.kind === 'asked' ? wait.ms : backoff * (0.5 + randomness.random() / 2), request.signal);
    try {
      return await next(attempt + 1);
    } catch (failed) {
      thrown = failed;
    }
  }
}

/** The failure that ends the retries because the provider asked for a longer wait than the cap. */
function tooLong(error: ProviderError, askedMs: number, maxMs: number): ProviderError {
  const message = `${error.message} (the provider asked to wait ${formatWait(askedMs)} before another try, more than modelRetry.maxRetryAfterMs allows, ${formatWait(maxMs)}: not retried)`;
  return new ProviderError(error.kind, message, { retryable: false, cause: error, ...(error.status !== undefined && { status: error.status }) });
}
