/**
 * Gemini's errors, restated so troupe's classifier (`factsOf` → `classifyFailure`) can read them.
 * `@google/genai` throws an `ApiError` that carries the HTTP status and, as its message, the
 * JSON error body, but no response headers: the wait a 429 asks for and the reason a key was
 * refused are both inside that body.
 */
import { ApiError } from '@google/genai';

/** A Gemini failure with the facts `factsOf` reads: `status`, `headers` and `code`. */
export class GeminiFailure extends Error {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly code?: string;

  constructor(message: string, facts: { status?: number; headers?: Record<string, string>; code?: string; cause?: unknown }) {
    super(message, { cause: facts.cause });
    this.name = 'GeminiFailure';
    if (facts.status !== undefined) this.status = facts.status;
    if (facts.headers !== undefined) this.headers = facts.headers;
    if (facts.code !== undefined) this.code = facts.code;
  }
}

/** `google.rpc.Status` as the Gemini API puts it in an error body. */
type RpcStatus = { code?: unknown; message?: unknown; status?: unknown; details?: unknown };

/**
 * Restates what the client threw. An `ApiError` becomes a GeminiFailure with a readable message
 * (`RESOURCE_EXHAUSTED: …` rather than the raw JSON), the body's `RetryInfo.retryDelay` as a
 * `retry-after-ms` header, and an invalid key as 401: Gemini answers a bad key with
 * `400 INVALID_ARGUMENT` + `ErrorInfo.reason: API_KEY_INVALID`, which would otherwise read as a
 * bad request and the ring would keep offering the dead key. The client's "incomplete JSON
 * segment" (a body that ended mid-event) is a stream cut. Anything else passes through unchanged.
 */
export function geminiFailure(thrown: unknown): unknown {
  if (thrown instanceof ApiError) {
    const status = errorStatus(thrown.message);
    const facts: { status: number; headers?: Record<string, string>; cause: unknown } = { status: thrown.status, cause: thrown };
    if (status === undefined) return new GeminiFailure(thrown.message, facts);
    const retryMs = retryDelayMs(status.details);
    if (retryMs !== undefined) facts.headers = { 'retry-after-ms': String(retryMs) };
    if (keyRefused(status)) facts.status = 401;
    const name = typeof status.status === 'string' ? `${status.status}: ` : '';
    const text = typeof status.message === 'string' ? status.message : thrown.message;
    return new GeminiFailure(`${name}${text}`, facts);
  }
  if (thrown instanceof Error && /^Incomplete JSON segment/.test(thrown.message)) {
    return streamCut('the stream ended part-way through an event', thrown);
  }
  return thrown;
}

/** A stream that stopped before Gemini said how the turn ended: a network fault, retried. */
export function streamCut(detail: string, cause?: unknown): GeminiFailure {
  // ERR_STREAM_PREMATURE_CLOSE is one of the network codes classifyFailure knows.
  return new GeminiFailure(`${detail} (cut short)`, { code: 'ERR_STREAM_PREMATURE_CLOSE', cause });
}

/**
 * The `error` object of the body the client put in its message: `{"error":{…}}` for an HTTP
 * error, `got status: …. {"error":{…}}` for an error sent inside a stream.
 */
function errorStatus(message: string): RpcStatus | undefined {
  const start = message.indexOf('{');
  if (start < 0) return undefined;
  try {
    const body = JSON.parse(message.slice(start)) as { error?: unknown };
    return body !== null && typeof body === 'object' && body.error !== null && typeof body.error === 'object'
      ? (body.error as RpcStatus)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `google.rpc.RetryInfo.retryDelay` (a protobuf Duration in JSON: `"12s"`, `"0.250s"`) in ms. */
function retryDelayMs(details: unknown): number | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const detail of details as { '@type'?: unknown; retryDelay?: unknown }[]) {
    if (typeof detail?.['@type'] !== 'string' || !detail['@type'].endsWith('google.rpc.RetryInfo')) continue;
    const match = typeof detail.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay.trim()) : null;
    if (match) return Math.round(Number(match[1]) * 1000);
  }
  return undefined;
}

/** Gemini's ways of saying the key itself is bad, whatever HTTP status came with it. */
function keyRefused(status: RpcStatus): boolean {
  const reasons = Array.isArray(status.details)
    ? (status.details as { reason?: unknown }[]).map((detail) => detail?.reason).filter((reason) => typeof reason === 'string')
    : [];
  return reasons.includes('API_KEY_INVALID') || (typeof status.message === 'string' && /API key (?:not valid|expired)/i.test(status.message));
}
