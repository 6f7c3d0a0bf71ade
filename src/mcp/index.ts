/**
 * An MCP server's tools as troupe tools: `import { mcpTools } from 'troupe/mcp'`. Needs the
 * official MCP SDK: `npm install @modelcontextprotocol/sdk@1`.
 */
export { mcpTools } from './mcp-tools.js';
export type {
  McpApprovalPolicy,
  McpHttpServer,
  McpSkippedTool,
  McpStdioServer,
  McpToolAnnotations,
  McpToolInfo,
  McpTools,
  McpToolsOptions,
} from './mcp-options.js';
