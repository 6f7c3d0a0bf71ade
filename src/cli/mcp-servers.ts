import type { Logger } from 'pino';
import { ConfigError, errorMessage, missingPackage } from '../errors.js';
import type { McpTools } from '../mcp/index.js';
import type { Tool } from '../tools/types.js';
import type { Env, McpLoader } from './cli-io.js';

/** The servers `--mcp` started: their tools, in flag order, and how to end them all. */
export type McpServers = { tools: Tool[]; close(): Promise<void> };

/** The package `troupe/mcp` is built on, an optional peer dependency. */
const SDK = '@modelcontextprotocol/sdk';

// Imported only when `--mcp` is given, so a run without it never loads the MCP SDK.
const loadBundled: McpLoader = () => import('../mcp/index.js');

/**
 * Starts every `--mcp` server, in order, and collects their tools. Each server gets this
 * process's environment, as it would from a shell; a tool name another server took already is
 * renamed. When one cannot start, those already started are closed and the error names the flag;
 * a missing MCP SDK is a `ConfigError` naming the package to install.
 */
export async function openMcpServers(commands: readonly (readonly string[])[], env: Env, logger: Logger, load: McpLoader = loadBundled): Promise<McpServers> {
  const module = await loadMcp(load);
  const opened: McpTools[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(opened.map((server) => server.close()));
  };
  const environment = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  for (const [command, ...args] of commands) {
    try {
      const reserved = opened.flatMap((server) => server.tools.map((tool) => tool.name));
      opened.push(await module.mcpTools({ command: command!, args, env: environment, reserved, logger }));
    } catch (error) {
      await close();
      throw new Error(`--mcp ${JSON.stringify([command, ...args].join(' '))}: ${errorMessage(error)}`, { cause: error });
    }
  }
  return { tools: opened.flatMap((server) => server.tools), close };
}

/** Loads `troupe/mcp`; a missing SDK becomes one line naming what to install. */
async function loadMcp(load: McpLoader): ReturnType<McpLoader> {
  try {
    return await load();
  } catch (error) {
    const missing = missingPackage(error);
    if (missing === undefined) throw error;
    const detail = missing === SDK ? '' : ` (cannot find package '${missing}')`;
    throw new ConfigError(`--mcp needs the ${SDK} package: npm install ${SDK}@1${detail}`);
  }
}
