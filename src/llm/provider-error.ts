import type { ProviderErrorKind } from './types.js';

/** A failed model call, classified so the agent knows whether to retry. */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly retryable: boolean;
  /** How long the provider asked us to wait (`retry-after`), when it said. */
  readonly retryAfterMs?: number;
  readonly status?: number;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    options: { retryable?: boolean; retryAfterMs?: number; status?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ProviderError';
    this.kind = kind;
    this.retryable = options.retryable ?? defaultRetryable(kind);
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.status !== undefined) this.status = options.status;
  }
}

/** Rate limits, 5xx, network trouble and timeouts are worth another try; the rest are not. */
export function defaultRetryable(kind: ProviderErrorKind): boolean {
  return kind === 'rate_limit' || kind === 'server' || kind === 'network' || kind === 'timeout';
}

/** Turns whatever a provider threw into a ProviderError, keeping the original as `cause`. */
export function toProviderError(error: unknown, signal?: AbortSignal): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal?.aborted) return new ProviderError('aborted', 'the model call was aborted', { cause: error });
  const message = error instanceof Error ? error.message : `provider threw a non-Error value: ${String(error)}`;
  return new ProviderError('unknown', message, { cause: error });
}
