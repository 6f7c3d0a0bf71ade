import { createRequire } from 'node:module';
import type { Stream } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import { silentLogger } from '../log/silent-logger.js';
import { ToolError } from '../tools/tool-error.js';
import type { ToolProgress } from '../tools/types.js';
import type { McpCallResult } from './call-result.js';
import { callFailure, isSessionExpired } from './call-failure.js';
import type { McpHttpServer, McpStdioServer } from './mcp-options.js';

/** One tool as `tools/list` gives it (the fields troupe reads). */
export type ListedTool = {
  name: string;
  description?: string;
  inputSchema: unknown;
  annotations?: Record<string, unknown>;
  execution?: { taskSupport?: string };
};

/** A live session: the SDK client, its transport, and whether it has been lost. */
type Session = { client: Client; transport: Transport; lost: boolean; tools: ListedTool[] };

/** How a call is made: the troupe signal (aborting sends `notifications/cancelled`) and progress. */
export type CallOptions = { signal: AbortSignal; onProgress: (update: ToolProgress) => void };

/** The longest timer Node honours: the SDK's own request timeout is pushed out of the way. */
const NO_TIMEOUT = 2_147_483_647;
/** Characters of the server's stderr kept, to say why it went away. */
const STDERR_TAIL = 2_000;
/** Time `close` gives an HTTP server to end the session before the transport is dropped. */
const TERMINATE_MS = 2_000;

// A broken stream is resumed from its last event a couple of times, quickly; past that the
// session counts as lost, so a call in flight fails instead of waiting for its timeout.
const HTTP_RECONNECTION = { initialReconnectionDelay: 250, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 2, maxRetries: 2 };

const CLIENT_INFO = { name: 'troupe', version: ownVersion() };

/**
 * One MCP server, connected on demand: the first `open` connects and lists the tools, a lost
 * session (a child that exited, an HTTP server gone) is dropped, and the next call connects
 * again — a new child process, or a new HTTP session. `close` ends it for good.
 */
export class McpConnection {
  /** How messages name the server until its tools are named (`MCP server "everything"`). */
  label: string;
  readonly #spec: McpStdioServer | McpHttpServer;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  #session: Session | undefined;
  #opening: Promise<Session> | undefined;
  #closing: Promise<void> | undefined;
  #stderr = '';

  constructor(spec: McpStdioServer | McpHttpServer, options: { name: string | undefined; timeoutMs: number; logger: Logger | undefined }) {
    this.#spec = spec;
    this.#timeoutMs = options.timeoutMs;
    this.#logger = options.logger ?? silentLogger;
    const shown = options.name ?? (spec.url !== undefined ? undefined : spec.command);
    this.label = shown !== undefined ? `MCP server "${shown}"` : `MCP server at ${String(spec.url)}`;
  }

  /** The open session, connecting (and listing the tools) first when there is none. */
  open(): Promise<Session> {
    if (this.#closing !== undefined) return Promise.reject(new Error(`${this.label} was closed`));
    if (this.#session !== undefined && !this.#session.lost) return Promise.resolve(this.#session);
    this.#opening ??= this.#connect().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  /** The name and version the server reported, once connected. */
  serverInfo(): { name?: string; version?: string } {
    return this.#session?.client.getServerVersion() ?? {};
  }

  /**
   * Calls a tool. A session that expired on the server (HTTP 404) is replaced and the call sent
   * once more, since it never ran; any other failure throws a `ToolError` saying what happened.
   */
  async call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    for (let attempt = 1; ; attempt++) {
      if (this.#closing !== undefined) {
        throw new ToolError(`${this.label} was closed (close() was called); its tools take no more calls`, { kind: 'execution', retryable: false });
      }
      let session: Session;
      try {
        session = await this.open();
      } catch (error) {
        throw callFailure(error, { label: this.label, stage: 'connect', lost: true, stderr: this.stderrTail() });
      }
      try {
        return (await session.client.callTool({ name, arguments: args }, undefined, {
          signal: options.signal,
          timeout: NO_TIMEOUT,
          onprogress: (progress) => options.onProgress({ progress: progress.progress, total: progress.total, message: progress.message }),
        })) as McpCallResult;
      } catch (error) {
        if (options.signal.aborted) throw error; // the dispatcher has reported the abort or the timeout already
        const expired = isSessionExpired(error);
        const lost = session.lost || expired || isNetworkError(error);
        if (lost) this.#drop(session, errorMessage(error));
        if (expired && attempt === 1) continue;
        throw callFailure(error, { label: this.label, stage: 'call', lost, stderr: this.stderrTail() });
      }
    }
  }

  /** Ends the session and the child process; every later `open` or `call` fails. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  /** The last lines the server wrote to stderr, for messages about why it went away. */
  stderrTail(): string {
    const lines = this.#stderr.split('\n').map((line) => line.trim()).filter((line) => line !== '');
    return lines.slice(-3).join(' | ');
  }

  async #connect(): Promise<Session> {
    const transport = this.#transport();
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const session: Session = { client, transport, lost: false, tools: [] };
    client.onclose = () => {
      if (!session.lost) this.#drop(session, 'the connection closed');
    };
    client.onerror = (error) => {
      // The SDK reports here that a broken HTTP stream could not be resumed: nothing will answer.
      if (/Maximum reconnection attempts/.test(error.message)) this.#drop(session, error.message);
      else this.#logger.debug({ server: this.label, error: error.message }, 'MCP transport error');
    };
    try {
      await client.connect(transport, { timeout: this.#timeoutMs });
      session.tools = await listTools(client, this.#timeoutMs);
    } catch (error) {
      session.lost = true;
      await client.close().catch(() => undefined);
      throw error;
    }
    if (this.#closing !== undefined) {
      // close() was called while connecting: do not leave a child behind.
      session.lost = true;
      await client.close().catch(() => undefined);
      throw new Error(`${this.label} was closed`);
    }
    this.#session = session;
    return session;
  }

  #transport(): Transport {
    const spec = this.#spec;
    if (spec.url !== undefined) {
      return new StreamableHTTPClientTransport(new URL(String(spec.url)), {
        requestInit: spec.headers === undefined ? undefined : { headers: { ...spec.headers } },
        reconnectionOptions: HTTP_RECONNECTION,
      });
    }
    const transport = new StdioClientTransport({
      command: spec.command,
      args: spec.args === undefined ? [] : [...spec.args],
      ...(spec.env !== undefined && { env: { ...spec.env } }),
      ...(spec.cwd !== undefined && { cwd: spec.cwd }),
      stderr: 'pipe',
    });
    this.#stderr = '';
    (transport.stderr as Stream | null)?.on('data', (chunk: Buffer) => this.#onStderr(String(chunk)));
    return transport;
  }

  #onStderr(text: string): void {
    this.#stderr = (this.#stderr + text).slice(-STDERR_TAIL);
    for (const line of text.split('\n')) if (line.trim() !== '') this.#logger.debug({ server: this.label }, line.trim());
  }

  /** Forgets a session that can no longer answer; the next call connects again. */
  #drop(session: Session, reason: string): void {
    if (session.lost) return;
    session.lost = true;
    if (this.#session === session) this.#session = undefined;
    if (this.#closing === undefined) this.#logger.warn({ server: this.label, reason, stderr: this.stderrTail() || undefined }, 'MCP session lost; the next call reconnects');
    session.client.close().catch(() => undefined);
  }

  async #shutDown(): Promise<void> {
    const session = this.#session ?? (await this.#opening?.catch(() => undefined));
    this.#session = undefined;
    if (session === undefined || session.lost) return;
    session.lost = true;
    const transport = session.transport;
    if (transport instanceof StreamableHTTPClientTransport) {
      // Ask the server to end the session, without waiting long for a server that does not answer.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const patience = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, TERMINATE_MS);
      });
      await Promise.race([transport.terminateSession().catch(() => undefined), patience]);
      clearTimeout(timer);
    }
    await session.client.close().catch(() => undefined);
  }
}

/** Every page of `tools/list`. */
async function listTools(client: Client, timeoutMs: number): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  // A server that hands out cursors forever must not keep the host waiting forever.
  for (let page = 0; page < 100; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
    tools.push(...(result.tools as ListedTool[]));
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/** A failure of the way to the server rather than of the call: fetch failed, connection refused or reset. */
function isNetworkError(error: unknown): boolean {
  const message = errorMessage(error);
  if (/fetch failed|Not connected|ECONNREFUSED|ECONNRESET|socket hang up|SSE stream disconnected/i.test(message)) return true;
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' && /^(?:ECONN|EPIPE|ENOTFOUND|EAI_AGAIN|UND_ERR_)/.test(cause.code);
}

/** This package's version, for the `clientInfo` a server sees. */
function ownVersion(): string {
  try {
    return (createRequire(import.meta.url)('troupe/package.json') as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
