import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../errors.js';
import { classifyError } from '../tools/classify-error.js';
import { ToolError } from '../tools/tool-error.js';
import type { ToolErrorKind } from '../tools/types.js';

/** Where a call failed, and what is known about the server at that moment. */
export type FailureContext = {
  /** How messages name the server: `MCP server "everything"`. */
  label: string;
  /** `connect`: the server could not be reached or started; `call`: the call itself failed. */
  stage: 'connect' | 'call';
  /** The session is gone (the child exited, the HTTP server went away): the next call reconnects. */
  lost: boolean;
  /** The server's last stderr lines, if any. */
  stderr: string;
};

const RECONNECT_HINT = 'the MCP server went away; the next call starts it again (or opens a new session)';

/**
 * The `ToolError` a failed MCP call reports. A server that cannot be reached or went away is
 * `network` and retryable; a JSON-RPC error the server answered with (an unknown tool or bad
 * arguments from servers that do not answer those with `isError`) is `execution`, with its message;
 * HTTP statuses map as for any client (401/403 `permission`, 429 and 5xx `network`).
 */
export function callFailure(error: unknown, context: FailureContext): ToolError {
  // The SDK prefixes a server's JSON-RPC error message with its code, which servers built on the SDK did already.
  const message = errorMessage(error).replace(/^(MCP error -?\d+: )\1+/, '$1');
  const stderr = context.stderr === '' ? '' : ` (its stderr: ${context.stderr})`;
  if (context.stage === 'connect') {
    return new ToolError(`cannot reach ${context.label}: ${message}${stderr}`, { kind: 'network', retryable: true, hint: RECONNECT_HINT, cause: error });
  }
  if (context.lost) {
    return new ToolError(`${context.label} went away during the call: ${message}${stderr}`, { kind: 'network', retryable: true, hint: RECONNECT_HINT, cause: error });
  }
  if (error instanceof McpError) {
    const kind: ToolErrorKind = error.code === ErrorCode.RequestTimeout ? 'timeout' : 'execution';
    return new ToolError(`${context.label} answered with an error: ${message}`, { kind, cause: error });
  }
  if (error instanceof StreamableHTTPError) {
    const status = error.code ?? 0;
    const kind: ToolErrorKind = status === 401 || status === 403 ? 'permission' : status === 429 ? 'rate_limit' : status >= 500 ? 'network' : 'execution';
    return new ToolError(`${context.label}: ${message}`, { kind, cause: error });
  }
  const failure = classifyError(error);
  return new ToolError(`${context.label}: ${failure.message}`, { kind: failure.kind, retryable: failure.retryable, cause: error });
}

/**
 * The server no longer knows the session: HTTP 404, which the spec says means "start a new
 * session", or a 400 whose message is about the session id (server-everything answers so).
 */
export function isSessionExpired(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}
