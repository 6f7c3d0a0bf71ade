import type { Publish } from '../bus/bus.js';
import { toProviderError } from '../llm/provider-error.js';
import type { ModelRequest, ModelResponse, Provider } from '../llm/types.js';
import { sleepFor } from '../tools/dispatch-calls.js';
import type { RetryPolicy } from '../tools/types.js';

export type { Publish } from '../bus/bus.js';

/** Where retry jitter comes from: `Math`, or an agent's seeded generator. */
export type Randomness = { random(): number };

export const DEFAULT_MODEL_RETRY: Required<RetryPolicy> = { attempts: 3, backoffMs: 500, maxBackoffMs: 30_000 };

/**
 * One deliberation: calls the provider (answering synchronously when it can), retrying retryable failures with exponential backoff (or
 * exactly the `retry-after` the provider asked for). Every failed attempt is an `llm.error`; the
 * last one is rethrown as a ProviderError for the agent to fail on.
 */
export function callModel(
  provider: Provider,
  request: ModelRequest,
  policy: Required<RetryPolicy>,
  publish: Publish,
  randomness: Randomness,
): ModelResponse | Promise<ModelResponse> {
  // The first attempt without an async frame: most calls answer, and a crowd makes many. A
  // provider that can answer at once (`completeNow`, a scripted brain) is not made to wait.
  let first: ModelResponse | Promise<ModelResponse>;
  const again = (): Promise<ModelResponse> => provider.complete(request);
  try {
    first = provider.completeNow !== undefined ? provider.completeNow(request) : provider.complete(request);
  } catch (thrown) {
    return retryAfterFailure(request, policy, publish, thrown, 1, again, randomness);
  }
  if (!(first instanceof Promise)) return first;
  return first.then(undefined, (thrown: unknown) => retryAfterFailure(request, policy, publish, thrown, 1, again, randomness));
}

/**
 * After attempt `attempt` failed with `thrown`: reports it as `llm.error` and, while the failure is
 * retryable and attempts remain, waits (the provider's `retry-after`, else exponential backoff
 * with jitter drawn from `randomness`: between half and all of `backoffMs × 2^(attempt-1)`, capped at `maxBackoffMs`) and
 * tries again with `next(attempt)`. An abort is the caller's doing: nothing to report or retry.
 */
export async function retryAfterFailure<T>(
  request: ModelRequest,
  policy: Required<RetryPolicy>,
  publish: Publish,
  thrown: unknown,
  attempt: number,
  next: (attempt: number) => Promise<T>,
  randomness: Randomness,
): Promise<T> {
  for (; ; attempt++) {
    const error = toProviderError(thrown, request.signal);
    if (request.signal.aborted) throw error;
    const again = error.retryable && attempt < policy.attempts;
    publish('llm.error', {
      round: request.round,
      kind: error.kind,
      message: error.message,
      retryable: error.retryable,
      attempt,
      ...(error.retryAfterMs !== undefined && { retryAfterMs: error.retryAfterMs }),
    });
    if (!again) throw error;
    const backoff = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (attempt - 1));
    // Jitter spreads the retries of many agents hit by one outage; a server's own wait is exact.
    await sleepFor(error.retryAfterMs ?? backoff * (0.5 + randomness.random() / 2), request.signal);
    try {
      return await next(attempt + 1);
    } catch (failed) {
      thrown = failed;
    }
  }
}
