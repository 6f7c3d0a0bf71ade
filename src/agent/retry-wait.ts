export { MAX_TIMER_MS } from '../tools/retry-policy.js';

/** What a provider's `retry-after` means for the next attempt. */
export type RetryWait =
  /** No usable wait was given: the agent's own backoff applies. */
  | { kind: 'backoff' }
  /** Wait exactly `ms`, as the provider asked. */
  | { kind: 'asked'; ms: number }
  /** The provider asked for longer than the agent's cap allows: fail now instead of sleeping. */
  | { kind: 'too_long'; askedMs: number; maxMs: number };

/**
 * The provider's wait, checked against the agent's cap. A `retry-after` is honoured exactly up to
 * `maxRetryAfterMs`; one over it (an hour, a date next year, a number too large to be finite) is
 * refused rather than slept or cut short — a provider that says "an hour" will not answer in a
 * minute, and sleeping an hour inside a run helps no one. A wait that is not a wait (negative, not
 * a number) counts as not given.
 *
 * @example
 * retryWait(3_600_000, 60_000); // { kind: 'too_long', askedMs: 3600000, maxMs: 60000 }
 * retryWait(-5, 60_000);        // { kind: 'backoff' }
 */
export function retryWait(askedMs: number | undefined, maxRetryAfterMs: number): RetryWait {
  if (askedMs === undefined || Number.isNaN(askedMs) || askedMs < 0) return { kind: 'backoff' };
  if (askedMs > maxRetryAfterMs) return { kind: 'too_long', askedMs, maxMs: maxRetryAfterMs };
  return { kind: 'asked', ms: askedMs };
}

/**
 * A wait as a person reads it: `750 ms`, `30 s`, `1 h`, `2 d`.
 *
 * @example
 * formatWait(3_600_000); // '1 h'
 */
export function formatWait(ms: number): string {
  if (!Number.isFinite(ms)) return 'an unbounded time';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  // To the second first: a wait counted down from a clock (3,599,999 ms) still reads as `1 h`.
  ms = Math.round(ms / 1_000) * 1_000;
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
  ];
  for (const [size, unit] of units) if (ms >= size * 2 || (ms >= size && ms % size === 0)) return `${round(ms / size)} ${unit}`;
  return `${round(ms / 1_000)} s`;
}

function round(value: number): string {
  return (Math.round(value * 10) / 10).toLocaleString('en-US');
}
