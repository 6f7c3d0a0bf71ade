import { TroupeError, errorMessage } from '../errors.js';
import { silentLogger } from '../log/silent-logger.js';
import type { Tool } from '../tools/types.js';
import { McpConnection } from './mcp-connection.js';
import { checkMcpOptions, type McpSkippedTool, type McpTools, type McpToolsOptions } from './mcp-options.js';
import { makeTool } from './mcp-tool.js';
import { defaultServerName, mapToolNames } from './tool-names.js';

/** Time to connect and list the tools when `connectTimeoutMs` is not given. */
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/**
 * An MCP server's tools as troupe tools. Connects to the server — a child process over stdio
 * (`{ command, args?, env?, cwd? }`) or Streamable HTTP (`{ url, headers? }`) —, lists its tools
 * and makes each a troupe tool named `server__tool`, its input schema converted to draft-07 and
 * its annotations read as `readOnly`, `idempotent` and `needsApproval` (`approval`). A tool whose
 * schema cannot be registered is skipped, logged and listed in `skipped`; the others load.
 *
 * Calls go to the server with the troupe signal (an abort or a timeout sends
 * `notifications/cancelled`), its progress notifications become `tool.progress` events, and
 * its results become text, JSON and image parts. A server that dies fails the calls in flight
 * (`tool.failed`, kind `network`, retryable); the next call starts it again, or opens a new HTTP
 * session. Call `close()` when done: it ends the child process.
 *
 * Rejects with `ConfigError` for options that cannot work, and with `TroupeError` code
 * `mcp_connect_failed` when the server cannot be started or reached, or does not list its tools.
 *
 * @example
 * const filesystem = await mcpTools({ name: 'fs', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/notes'] });
 * const agent = createAgent({ name: 'clerk', tools: filesystem.tools, provider });
 * try {
 *   await agent.run('List the notes.');
 * } finally {
 *   await filesystem.close();
 * }
 */
export async function mcpTools(options: McpToolsOptions): Promise<McpTools> {
  checkMcpOptions(options);
  const logger = options.logger ?? silentLogger;
  const connection = new McpConnection(options, { name: options.name, timeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, logger });
  let listed;
  try {
    ({ tools: listed } = await connection.open());
  } catch (error) {
    await connection.close();
    const stderr = connection.stderrTail();
    throw new TroupeError('mcp_connect_failed', `cannot connect to ${connection.label}: ${errorMessage(error)}${stderr === '' ? '' : ` (its stderr: ${stderr})`}`, {
      cause: error,
    });
  }
  const server = options.name ?? defaultServerName(connection.serverInfo().name);
  connection.label = `MCP server "${server}"`;
  const names = mapToolNames(server, listed.map((tool) => tool.name), options.reserved);
  const setup = { server, connection, approval: options.approval ?? 'destructive', timeoutMs: options.timeoutMs, retry: options.retry };
  const tools: Tool[] = [];
  const skipped: McpSkippedTool[] = [];
  const seen = new Set<string>();
  for (const entry of listed) {
    if (seen.has(entry.name)) {
      skipped.push({ name: entry.name, reason: 'the server lists this name twice; the first one is used' });
      continue;
    }
    seen.add(entry.name);
    const made = makeTool(entry, names.get(entry.name)!, setup);
    if (!made.ok) {
      skipped.push({ name: entry.name, reason: made.problem });
      continue;
    }
    if (made.value.approvalProblem !== undefined) logger.warn({ server, tool: entry.name }, made.value.approvalProblem);
    tools.push(made.value.tool);
  }
  for (const { name, reason } of skipped) logger.warn({ server, tool: name }, `MCP tool "${name}" skipped: ${reason}`);
  return { tools, skipped, server, close: () => connection.close() };
}
