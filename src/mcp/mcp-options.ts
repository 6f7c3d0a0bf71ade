import type { Logger } from 'pino';
import { ConfigError, errorMessage } from '../errors.js';
import { defineTool } from '../tools/define-tool.js';
import type { Tool, ToolRetryPolicy } from '../tools/types.js';
import { checkServerName } from './tool-names.js';

/** A server troupe starts as a child process and talks to over its stdin and stdout. */
export type McpStdioServer = {
  /** The executable (looked up on `PATH`); no shell runs it. */
  command: string;
  args?: readonly string[];
  /**
   * Variables added to the child's environment. The child also gets the SDK's safe defaults from
   * this process (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`), nothing else.
   */
  env?: Readonly<Record<string, string>>;
  /** The child's working directory (default: this process's). */
  cwd?: string;
  url?: never;
};

/** A server reached over Streamable HTTP. */
export type McpHttpServer = {
  /** The server's MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`. */
  url: string | URL;
  /** Sent with every request (an `Authorization` header, say). */
  headers?: Readonly<Record<string, string>>;
  command?: never;
};

/** What the approval policy is told about a tool: its names, description and annotations. */
export type McpToolInfo = {
  /** The server's prefix (`name`, or the name the server reports). */
  server: string;
  /** The tool's name on the server. */
  name: string;
  /** Its troupe name (`server__tool`). */
  toolName: string;
  description: string;
  /** The tool's annotations as the server sent them: hints, which a server can get wrong. */
  annotations: McpToolAnnotations;
};

/** The MCP tool annotations troupe reads (all hints; the spec's defaults apply when absent). */
export type McpToolAnnotations = {
  title?: string;
  /** Default false: the tool may change its environment. */
  readOnlyHint?: boolean;
  /** Default true: a tool that changes its environment may destroy something (meaningful when not read-only). */
  destructiveHint?: boolean;
  /** Default false: calling it twice with the same arguments may do more than once. */
  idempotentHint?: boolean;
  /** Default true: the tool reaches beyond the server (the web, other systems). */
  openWorldHint?: boolean;
};

/**
 * Which tools park the agent for approval (`needsApproval`): `'destructive'` (the default) asks for
 * every tool that is not read-only and not marked `destructiveHint: false` — so a tool without
 * annotations asks, as the spec's defaults say; `'always'`, `'never'`, or your own predicate.
 */
export type McpApprovalPolicy = 'destructive' | 'always' | 'never' | ((tool: McpToolInfo) => boolean);

/** The options of `mcpTools`: one server, how to reach it, and how its tools behave. */
export type McpToolsOptions = (McpStdioServer | McpHttpServer) & {
  /**
   * The server's name: it prefixes every tool name (`name__tool`). A letter, then up to 31
   * letters, digits, `_` or `-`. Default: the last part of the name the server reports
   * (`mcp-servers/everything` → `everything`).
   */
  name?: string;
  /** Which tools need approval (default `'destructive'`). */
  approval?: McpApprovalPolicy;
  /** Per-attempt time limit of every tool (default: the dispatcher's, 30 s; 0 disables). */
  timeoutMs?: number;
  /** Retry policy of every tool; only read-only and idempotent tools are retried. */
  retry?: ToolRetryPolicy;
  /** Names already taken (local tools, another server's tools): a tool that would take one is renamed. */
  reserved?: Iterable<string>;
  /** Time to connect and list the tools, each time (default 30 s). */
  connectTimeoutMs?: number;
  /** A pino logger: warnings for skipped tools and lost connections, the server's stderr at debug. */
  logger?: Logger;
};

/** A tool the server offers that troupe did not register, and why. */
export type McpSkippedTool = { name: string; reason: string };

/** What `mcpTools` resolves to: the server's tools as troupe tools, and how to let go of it. */
export type McpTools = {
  /** The registered tools, in the server's order. */
  tools: Tool[];
  /** The server's tools troupe could not register (schema, name), with the reason; each also logged. */
  skipped: McpSkippedTool[];
  /** The prefix the tool names carry. */
  server: string;
  /** Ends the session and the child process (or the HTTP session); safe to call twice. Calls after it fail. */
  close(): Promise<void>;
};

const APPROVALS = ['destructive', 'always', 'never'];

/** The options checked: a `ConfigError` names the first that cannot work. */
export function checkMcpOptions(options: McpToolsOptions): void {
  if (typeof options !== 'object' || options === null) throw new ConfigError('mcpTools(options) takes an object: { command, args? } or { url }');
  const { command, url } = options as { command?: unknown; url?: unknown };
  if ((command === undefined) === (url === undefined)) {
    throw new ConfigError('mcpTools needs exactly one of `command` (a server started as a child process) or `url` (a Streamable HTTP server)');
  }
  if (command !== undefined) {
    if (typeof command !== 'string' || command.trim() === '') throw new ConfigError(`mcpTools: command must be a non-empty string, got ${JSON.stringify(command)}`);
    const { args, env, cwd } = options as McpStdioServer;
    if (args !== undefined && (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string'))) throw new ConfigError('mcpTools: args must be an array of strings');
    if (env !== undefined && (typeof env !== 'object' || env === null || !Object.values(env).every((value) => typeof value === 'string'))) {
      throw new ConfigError('mcpTools: env must be an object of strings');
    }
    if (cwd !== undefined && typeof cwd !== 'string') throw new ConfigError('mcpTools: cwd must be a string');
  } else {
    let parsed: URL | undefined;
    try {
      parsed = new URL(String(url));
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new ConfigError(`mcpTools: url must be an http(s) URL such as http://127.0.0.1:3001/mcp, got ${JSON.stringify(String(url))}`);
    }
    const { headers } = options as McpHttpServer;
    if (headers !== undefined && (typeof headers !== 'object' || headers === null || !Object.values(headers).every((value) => typeof value === 'string'))) {
      throw new ConfigError('mcpTools: headers must be an object of strings');
    }
  }
  if (options.name !== undefined) checkServerName(options.name);
  const { approval } = options;
  if (approval !== undefined && typeof approval !== 'function' && !APPROVALS.includes(approval)) {
    throw new ConfigError(`mcpTools: approval must be 'destructive', 'always', 'never' or a function (tool) => boolean, got ${JSON.stringify(approval)}`);
  }
  const { reserved } = options;
  if (reserved !== undefined && (typeof reserved === 'string' || typeof (reserved as Iterable<unknown>)[Symbol.iterator] !== 'function')) {
    throw new ConfigError('mcpTools: reserved must be a list (or set) of tool names');
  }
  checkToolOptions(options);
  const { connectTimeoutMs } = options;
  if (connectTimeoutMs !== undefined && (!Number.isInteger(connectTimeoutMs) || connectTimeoutMs < 1 || connectTimeoutMs > 2_147_483_647)) {
    throw new ConfigError(`mcpTools: connectTimeoutMs must be a positive integer (milliseconds), got ${String(connectTimeoutMs)}`);
  }
}

/** `timeoutMs` and `retry` go on every tool: checked here by `defineTool`'s own rules, once. */
function checkToolOptions({ timeoutMs, retry }: McpToolsOptions): void {
  if (timeoutMs === undefined && retry === undefined) return;
  try {
    defineTool({
      name: 'mcp_options',
      description: '',
      parameters: { type: 'object', properties: {} },
      ...(timeoutMs !== undefined && { timeoutMs }),
      ...(retry !== undefined && { retry }),
      execute: () => undefined,
    });
  } catch (error) {
    throw new ConfigError(`mcpTools: ${errorMessage(error).replace(/^tool "mcp_options": /, '')}`);
  }
}
