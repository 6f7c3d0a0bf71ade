import { RETRYABLE_BY_DEFAULT, ToolError } from './tool-error.js';
import type { ToolErrorKind, ToolFailure } from './types.js';

/** Longest error message passed on to the bus and the model; the rest is cut with a marker. */
export const MAX_ERROR_MESSAGE_CHARS = 2_000;

const HINTS: Partial<Record<ToolErrorKind, string>> = {
  not_found: 'check the path or id exists (list what is there first)',
  permission: 'this resource is not accessible to the tool; choose another one or ask for access',
  network: 'a transient network problem; the same call may work later',
  timeout: 'the call took too long; try a smaller request or narrower arguments',
  rate_limit: 'the service is limiting requests; wait before calling it again',
};

// Node system error codes (libuv and undici) and what they mean for a tool call.
const CODE_KINDS: Record<string, ToolErrorKind> = {
  ENOENT: 'not_found',
  ENOTDIR: 'not_found',
  EACCES: 'permission',
  EPERM: 'permission',
  EROFS: 'permission',
  ECONNRESET: 'network',
  ECONNREFUSED: 'network',
  ECONNABORTED: 'network',
  ETIMEDOUT: 'timeout',
  ESOCKETTIMEDOUT: 'timeout',
  EPIPE: 'network',
  EAI_AGAIN: 'network',
  ENOTFOUND: 'network',
  ENETUNREACH: 'network',
  EHOSTUNREACH: 'network',
};

// HTTP statuses carried by client errors (`status`, `statusCode`, `response.status`).
const STATUS_KINDS: Record<number, ToolErrorKind> = {
  401: 'permission',
  403: 'permission',
  404: 'not_found',
  408: 'timeout',
  410: 'not_found',
  429: 'rate_limit',
  502: 'network',
  503: 'network',
  504: 'network',
};

// What an error's words say when it carries no code or status: a shell's or a client's message
// ("Command timed out after 120000ms", "socket hang up", "429 Too Many Requests"). Checked in order.
const MESSAGE_KINDS: readonly (readonly [RegExp, ToolErrorKind])[] = [
  [/\b(?:HTTP|status)\b\W{0,3}(?:code\W{0,3})?429\b|too many requests|rate[ -]?limit(?:ed|ing)?\b/i, 'rate_limit'],
  [/\btimed?[ -]?out\b|\btimeout\b|\bE(?:SOCKET)?TIMEDOUT\b/i, 'timeout'],
  [/\b(?:ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|EAI_AGAIN|ENOTFOUND|ENETUNREACH|EHOSTUNREACH)\b|socket hang up|network error/i, 'network'],
];

/**
 * Turns whatever a tool threw into a `ToolFailure` with a kind and `retryable`: a `ToolError` as thrown;
 * Node codes and HTTP statuses, looked for along the `cause` chain, to `not_found`, `permission`,
 * `network`, `rate_limit` or `timeout`; `AbortError`/`TimeoutError` to `aborted`/`timeout`; then
 * the words of the message (or of a thrown string) to `timeout` ("timed out", "timeout",
 * `ETIMEDOUT`), `network` (`ECONNRESET`, `ECONNREFUSED`, `EAI_AGAIN`, "socket hang up", …) or
 * `rate_limit` ("429", "too many requests", "rate limit"); everything else, including other
 * non-Error values, to `execution` with a readable message.
 */
export function classifyError(error: unknown): ToolFailure {
  try {
    return classify(error);
  } catch {
    // A Proxy or a getter that throws at every touch: nothing more can be learnt from it.
    return { kind: 'unknown', message: 'tool threw an error that cannot be read', retryable: false };
  }
}

function classify(error: unknown): ToolFailure {
  if (error instanceof ToolError) {
    // The tool chose its words (and its kind): no class name in front of them.
    const message = cap(error.message === '' ? '(no message)' : error.message);
    return withHint({ kind: error.kind, message, retryable: error.retryable }, error.hint);
  }
  const message = cap(error instanceof Error ? describeError(error) : `tool threw a non-Error value: ${preview(error)}`);
  const kind = kindFromChain(error) ?? kindFromWords(error);
  if (kind !== undefined) {
    return withHint({ kind, message, retryable: RETRYABLE_BY_DEFAULT[kind] }, HINTS[kind]);
  }
  return { kind: 'execution', message, retryable: false };
}

function kindFromChain(error: unknown): ToolErrorKind | undefined {
  let node = error;
  // A bounded walk: `cause` chains can be cyclic.
  for (let depth = 0; depth < 5 && typeof node === 'object' && node !== null; depth++) {
    const found = kindOf(node as Record<string, unknown>);
    if (found !== undefined) return found;
    node = (node as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The kind the words of a thrown string, or of an error's message (or its causes'), name. */
function kindFromWords(error: unknown): ToolErrorKind | undefined {
  let node = error;
  for (let depth = 0; depth < 5; depth++) {
    const text = typeof node === 'string' ? node : read(node, 'message');
    if (typeof text === 'string' && text !== '') {
      // Long outputs are cut: a match at their start or end is what a failing command prints.
      const words = text.length > 2_000 ? `${text.slice(0, 1_000)}\n${text.slice(-1_000)}` : text;
      for (const [pattern, kind] of MESSAGE_KINDS) if (pattern.test(words)) return kind;
    }
    if (typeof node !== 'object' || node === null) return undefined;
    node = read(node, 'cause');
  }
  return undefined;
}

function kindOf(node: Record<string, unknown>): ToolErrorKind | undefined {
  const code = read(node, 'code');
  if (typeof code === 'string') {
    if (Object.hasOwn(CODE_KINDS, code)) return CODE_KINDS[code];
    if (code.startsWith('UND_ERR_')) return 'network';
  }
  const response = read(node, 'response');
  for (const status of [read(node, 'status'), read(node, 'statusCode'), read(response, 'status')]) {
    if (typeof status === 'number' && Object.hasOwn(STATUS_KINDS, status)) return STATUS_KINDS[status];
  }
  const name = read(node, 'name');
  if (name === 'TimeoutError') return 'timeout';
  if (name === 'AbortError') return 'aborted';
  return undefined;
}

// Getters on hostile error objects may throw; classification must not.
function read(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function describeError(error: Error): string {
  const name = read(error, 'name');
  const message = read(error, 'message');
  const text = typeof message === 'string' && message !== '' ? message : '(no message)';
  return typeof name === 'string' && name !== 'Error' && name !== '' ? `${name}: ${text}` : text;
}

/** A short, printable rendering of any thrown value: `"oops"`, `undefined`, `{}`. */
export function preview(value: unknown, maxChars = 200): string {
  let text: string;
  try {
    if (typeof value === 'string') text = JSON.stringify(value);
    else if (typeof value === 'bigint') text = `${value}n`;
    else if (typeof value === 'function') text = `[Function ${value.name || 'anonymous'}]`;
    else if (typeof value === 'symbol' || value === undefined) text = String(value);
    else text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}

function cap(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  return `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}… [${message.length - MAX_ERROR_MESSAGE_CHARS} more characters]`;
}

function withHint(failure: ToolFailure, hint: string | undefined): ToolFailure {
  return hint === undefined ? failure : { ...failure, hint };
}
