import { ProviderError } from './provider-error.js';
import type { ProviderErrorKind } from './types.js';
import { redactKeyLike } from './key-ring.js';

/** What an adapter knows about a failed request, whichever client library threw it. */
export type FailureFacts = {
  /** HTTP status, when the server answered. */
  status?: number;
  /** Response headers, when the server answered (for `retry-after`). */
  headers?: HeaderSource;
  /** A Node or undici error code (`ECONNRESET`, `UND_ERR_SOCKET`, …), when the network failed. */
  code?: string;
  message: string;
};

type HeaderSource = { get(name: string): string | null } | Readonly<Record<string, string | string[] | undefined>>;

/** Context the adapter adds: its own timer fired, the caller aborted, which provider spoke. */
export type FailureContext = {
  provider: string;
  signal?: AbortSignal;
  /** The adapter's request timer fired (the client library only sees an abort). */
  timedOut?: boolean;
  timeoutMs?: number;
  /** Redacts keys out of messages (the key ring's `redact`). */
  redact?: (text: string) => string;
};

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/**
 * Classifies a failed model request into a ProviderError: 429 → `rate_limit` (with the wait the
 * server asked for), 5xx/408/409 → `server`, 401/403 → `auth`, other 4xx → `bad_request`, a socket
 * or DNS failure or a stream cut → `network`, the adapter's timer → `timeout`, the caller's
 * signal → `aborted`. Messages are redacted: no key ever reaches an event, a log or an error.
 */
export function classifyFailure(facts: FailureFacts, context: FailureContext): ProviderError {
  const redact = (text: string): string => redactKeyLike(context.redact ? context.redact(text) : text);
  const detail = redact(facts.message);
  const where = `${context.provider}`;
  if (context.timedOut) {
    return new ProviderError('timeout', `${where}: no answer within ${context.timeoutMs ?? '?'} ms`, { retryable: true });
  }
  if (context.signal?.aborted) return new ProviderError('aborted', `${where}: the model call was aborted`);
  const status = facts.status;
  if (status !== undefined && status > 0) {
    const kind = kindOfStatus(status);
    const options: { status: number; retryAfterMs?: number } = { status };
    const retryAfterMs = kind === 'rate_limit' || kind === 'server' ? retryAfter(facts.headers) : undefined;
    if (retryAfterMs !== undefined) options.retryAfterMs = retryAfterMs;
    return new ProviderError(kind, `${where}: HTTP ${status}: ${detail}`, options);
  }
  if (facts.code !== undefined && NETWORK_CODES.has(facts.code)) {
    return new ProviderError('network', `${where}: network error (${facts.code}): ${detail}`);
  }
  if (/fetch failed|socket hang up|terminated|other side closed|connection (?:error|reset)|premature close/i.test(facts.message)) {
    return new ProviderError('network', `${where}: network error: ${detail}`);
  }
  return new ProviderError('unknown', `${where}: ${detail}`);
}

function kindOfStatus(status: number): ProviderErrorKind {
  if (status === 429) return 'rate_limit';
  if (status === 401 || status === 403) return 'auth';
  if (status === 408) return 'timeout';
  if (status === 409 || status >= 500) return 'server';
  return 'bad_request';
}

/**
 * The wait a server asked for, in ms: `retry-after-ms`, then `retry-after` in seconds or as an
 * HTTP date. A value that is no wait is left out (the agent's backoff applies): negative, not a
 * number, or a date already past (one clock or the other is off). A number too large to be finite
 * is `Infinity`, which the agent's `modelRetry.maxRetryAfterMs` refuses like any wait over it.
 */
export function retryAfter(headers: HeaderSource | undefined, now: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const ms = nonNegativeNumber(header(headers, 'retry-after-ms'));
  if (ms !== undefined) return ms;
  const value = header(headers, 'retry-after');
  if (value === undefined) return undefined;
  const given = nonNegativeNumber(value);
  if (given !== undefined) return given * 1000;
  // A number, but not a wait ("-5", "NaN"): not a date either.
  if (/^\s*[-+]?(?:\d|\.\d|nan|infinity)/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) || date <= now ? undefined : date - now;
}

/** A non-negative number (`Infinity` included) from a header's text; anything else is undefined. */
function nonNegativeNumber(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  return value >= 0 ? value : undefined;
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | string[] | undefined>>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Reads the facts out of whatever a client library threw: the official clients put `status` and
 * `headers` on their API errors (the AI SDK's APICallError says `statusCode` and
 * `responseHeaders`), and undici puts the socket's `code` on the error or its cause.
 */
export function factsOf(error: unknown): FailureFacts {
  if (error === null || typeof error !== 'object') return { message: String(error) };
  const record = error as { status?: unknown; statusCode?: unknown; headers?: unknown; responseHeaders?: unknown; code?: unknown; cause?: unknown; message?: unknown };
  const facts: FailureFacts = { message: typeof record.message === 'string' ? record.message : String(error) };
  const status = record.status ?? record.statusCode;
  if (typeof status === 'number') facts.status = status;
  const headers = record.headers ?? record.responseHeaders;
  if (headers !== null && typeof headers === 'object') facts.headers = headers as HeaderSource;
  const code = codeOf(record) ?? codeOf(record.cause) ?? codeOf((record.cause as { cause?: unknown } | undefined)?.cause);
  if (code !== undefined) facts.code = code;
  return facts;
}

function codeOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}
