import { redactKeyLike } from '../key-ring.js';
import { ProviderError } from '../provider-error.js';
import type { ProviderErrorKind } from '../types.js';

/**
 * The AI SDK's own errors that carry no HTTP status, by the `name` every AI SDK error has (the
 * same mark `isInstance` reads, so no AI SDK package is loaded to tell them apart). An HTTP
 * failure is an `AI_APICallError` with `statusCode` and `responseHeaders`: the adapter kit
 * classifies it like any client's (429 → `rate_limit` with `retry-after`, 5xx → `server`…).
 */
const KINDS: ReadonlyMap<string, ProviderErrorKind> = new Map([
  // A key that is missing from the options and the environment: no retry will find one.
  ['AI_LoadAPIKeyError', 'auth'],
  // The request asked for something the provider package cannot send (an image to a text API…).
  ['AI_UnsupportedFunctionalityError', 'bad_request'],
  ['AI_InvalidPromptError', 'bad_request'],
  ['AI_InvalidArgumentError', 'bad_request'],
  // The server answered something that could not be read: a proxy's hiccup as often as not.
  ['AI_EmptyResponseBodyError', 'server'],
  ['AI_InvalidResponseDataError', 'server'],
  ['AI_JSONParseError', 'server'],
  ['AI_TypeValidationError', 'server'],
]);

/**
 * What to throw for a failure of the model's `doGenerate`/`doStream`: a ProviderError for the AI
 * SDK errors the adapter kit cannot read, else the error itself for the kit to classify (an HTTP
 * status, a socket code, the silence timer, the caller's abort).
 */
export function aiSdkFailure(thrown: unknown, provider: string, signal: AbortSignal): unknown {
  if (signal.aborted || thrown instanceof ProviderError) return thrown;
  const name = (thrown as { name?: unknown } | null)?.name;
  const status = (thrown as { statusCode?: unknown } | null)?.statusCode;
  if (name === 'AI_APICallError' && typeof status === 'number' && status < 400) {
    // provider-utils reports a failure to read an answer the server began (a stream cut under
    // it, a body that does not parse) as an APICallError with the answer's status, 200.
    const cause = (thrown as { cause?: unknown }).cause;
    const detail = cause === undefined ? describe(thrown) : `${describe(thrown)}: ${describe(cause)}`;
    return new ProviderError('network', `${provider}: the answer broke off while it was read (${redactKeyLike(detail)})`, { retryable: true, cause: thrown });
  }
  const kind = typeof name === 'string' ? KINDS.get(name) : undefined;
  if (kind === undefined) return thrown;
  return new ProviderError(kind, `${provider}: ${redactKeyLike(describe(thrown))}`, { cause: thrown });
}

/**
 * What to throw for an `error` part in a model's stream. One with an HTTP status goes to the kit;
 * a named AI SDK error as above; anything else (an error event the server sent mid-answer, such
 * as Anthropic's `overloaded_error`) is a `server` failure, retried from scratch.
 */
export function streamFailure(error: unknown, provider: string, signal: AbortSignal): unknown {
  const mapped = aiSdkFailure(error, provider, signal);
  if (mapped !== error || signal.aborted) return mapped;
  const record = error as { statusCode?: unknown; status?: unknown } | null;
  if (typeof record?.statusCode === 'number' || typeof record?.status === 'number') return error;
  return new ProviderError('server', `${provider}: the model's stream reported an error: ${redactKeyLike(describe(error))}`, { retryable: true, cause: error });
}

/** A readable message from an Error, a string, or an error object as providers stream them (`{ type, message }`, `{ error: { message } }`). */
function describe(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error instanceof Error) return error.message;
  const record = error as { message?: unknown; error?: { message?: unknown }; type?: unknown } | null;
  if (typeof record?.message === 'string') return typeof record.type === 'string' ? `${record.type}: ${record.message}` : record.message;
  if (typeof record?.error?.message === 'string') return record.error.message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
