import type { Tool, ToolErrorKind, ToolFailure } from './types.js';

export const DEFAULT_BACKOFF_MS = 100;
export const DEFAULT_MAX_BACKOFF_MS = 5_000;

/** The kinds of failure a retry policy can name (`aborted` is never retried). */
export type RetryKind = Exclude<ToolErrorKind, 'aborted'>;

const RETRY_KINDS: readonly RetryKind[] = Object.freeze(['execution', 'timeout', 'network', 'rate_limit', 'permission', 'not_found', 'unknown']);

/** How failures of one kind are retried; what it leaves out, the policy's own fields give. */
export type KindRetry = {
  /** Total attempts of the call when its latest failure is of this kind (the first included). */
  attempts?: number;
  /** Delay before the next attempt after a failure of this kind, doubled per attempt made. */
  backoffMs?: number;
  /** Upper bound on one such delay. */
  maxBackoffMs?: number;
};

/**
 * How a tool's failing calls are retried (`defineTool({ retry })`). A failure is retried when it
 * is `retryable`, not `aborted`, the tool is safe to run again (`readOnly` or `idempotent`), and
 * the call has had fewer attempts than its kind allows: `byKind[kind].attempts`, else `attempts`.
 */
export type ToolRetryPolicy = {
  /** Total attempts including the first (default 1: no retry). */
  attempts?: number;
  /** Delay before the second attempt, doubled each time (default 100 ms). */
  backoffMs?: number;
  /** Upper bound on one delay (default 5 s). */
  maxBackoffMs?: number;
  /** Attempts and delays for one kind of failure: `{ timeout: { attempts: 1 }, rate_limit: { attempts: 5, backoffMs: 2_000 } }`. */
  byKind?: Partial<Record<RetryKind, KindRetry>>;
};

/** Whether a call whose attempt number `attempts` failed with `failure` is tried again. */
export function mayRetry(tool: Pick<Tool, 'retry' | 'readOnly' | 'idempotent'>, failure: ToolFailure, attempts: number): boolean {
  if (!failure.retryable || failure.kind === 'aborted') return false;
  // A writer's failed attempt may have taken effect: only a tool that says a repeat is harmless is retried.
  if (tool.readOnly !== true && tool.idempotent !== true) return false;
  return attempts < attemptsFor(tool, failure.kind);
}

/** The attempts a call may have when its latest failure is of `kind`. */
function attemptsFor(tool: Pick<Tool, 'retry'>, kind: ToolErrorKind): number {
  const retry = tool.retry;
  if (retry === undefined) return 1;
  const attempts = byKind(retry, kind)?.attempts ?? retry.attempts ?? 1;
  return Math.max(1, Math.floor(attempts));
}

/**
 * Delay before attempt `attempt + 1`, after a failure of `kind` (the policy's own delays when the
 * kind has none): `backoffMs` doubled per attempt made, capped by `maxBackoffMs`.
 */
export function backoff(tool: Pick<Tool, 'retry'>, attempt: number, kind?: ToolErrorKind): number {
  const retry = tool.retry;
  const ofKind = retry === undefined || kind === undefined ? undefined : byKind(retry, kind);
  const base = ofKind?.backoffMs ?? retry?.backoffMs ?? DEFAULT_BACKOFF_MS;
  let cap = ofKind?.maxBackoffMs ?? retry?.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
  // A kind's own first delay is never cut by the policy's cap, only by the kind's.
  if (ofKind?.maxBackoffMs === undefined && ofKind?.backoffMs !== undefined) cap = Math.max(cap, base);
  return Math.min(base * 2 ** (attempt - 1), cap);
}

function byKind(retry: ToolRetryPolicy, kind: ToolErrorKind): KindRetry | undefined {
  const kinds = retry.byKind;
  return kinds !== undefined && Object.hasOwn(kinds, kind) ? kinds[kind as RetryKind] : undefined;
}

/** The longest timer Node honours (2^31 − 1 ms); larger values fire at once. */
/** The longest timer Node honours (2^31 − 1 ms); larger values fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;
const POLICY_KEYS = ['attempts', 'backoffMs', 'maxBackoffMs', 'byKind'];
const KIND_KEYS = ['attempts', 'backoffMs', 'maxBackoffMs'];

/** Checks a tool's `retry` (failing with `fail`) and returns it frozen, its delays filled in from the defaults. */
export function checkRetryPolicy(value: unknown, fail: (message: string) => never): Readonly<ToolRetryPolicy> {
  if (typeof value !== 'object' || value === null) return fail('retry must be an object like { attempts: 3, backoffMs: 100 }');
  const policy = value as Partial<ToolRetryPolicy>;
  checkKeys(policy, POLICY_KEYS, 'retry', fail);
  const { attempts = 1, backoffMs = DEFAULT_BACKOFF_MS, maxBackoffMs = DEFAULT_MAX_BACKOFF_MS } = policy;
  checkSettings({ attempts, backoffMs, maxBackoffMs }, 'retry', fail);
  if (maxBackoffMs < backoffMs) fail(`retry.maxBackoffMs (${maxBackoffMs}) must not be less than retry.backoffMs (${backoffMs})`);
  const checked: ToolRetryPolicy = { attempts, backoffMs, maxBackoffMs };
  if (policy.byKind !== undefined) checked.byKind = checkByKind(policy.byKind, fail);
  return Object.freeze(checked);
}

function checkByKind(value: unknown, fail: (message: string) => never): Partial<Record<RetryKind, KindRetry>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('retry.byKind must be an object like { timeout: { attempts: 1 } }');
  const byKind: Partial<Record<RetryKind, KindRetry>> = {};
  for (const [kind, entry] of Object.entries(value)) {
    if (kind === 'aborted') fail('retry.byKind cannot name "aborted": an aborted call is never retried');
    if (!(RETRY_KINDS as readonly string[]).includes(kind)) fail(`retry.byKind has an unknown kind "${kind}"; allowed: ${RETRY_KINDS.join(', ')}`);
    const where = `retry.byKind.${kind}`;
    if (typeof entry !== 'object' || entry === null) fail(`${where} must be an object like { attempts: 3, backoffMs: 100 }`);
    checkKeys(entry as object, KIND_KEYS, where, fail);
    const settings = entry as KindRetry;
    checkSettings(settings, where, fail);
    const { backoffMs, maxBackoffMs } = settings;
    if (backoffMs !== undefined && maxBackoffMs !== undefined && maxBackoffMs < backoffMs) {
      fail(`${where}.maxBackoffMs (${maxBackoffMs}) must not be less than its backoffMs (${backoffMs})`);
    }
    byKind[kind as RetryKind] = Object.freeze({ ...settings });
  }
  return Object.freeze(byKind);
}

function checkKeys(value: object, allowed: readonly string[], where: string, fail: (message: string) => never): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(`${where} has an unknown option "${key}"; allowed: ${allowed.join(', ')}`);
}

function checkSettings(settings: KindRetry, where: string, fail: (message: string) => never): void {
  const { attempts } = settings;
  if (attempts !== undefined && (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1 || attempts > 100)) {
    fail(`${where}.attempts must be an integer from 1 (no retry) to 100, got ${String(attempts)}`);
  }
  for (const key of ['backoffMs', 'maxBackoffMs'] as const) {
    const number = settings[key];
    if (number !== undefined && (typeof number !== 'number' || !Number.isInteger(number) || number < 0 || number > MAX_TIMER_MS)) {
      fail(`${where}.${key} must be an integer from 0 to ${MAX_TIMER_MS}, got ${String(number)}`);
    }
  }
}
