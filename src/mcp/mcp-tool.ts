import { ToolSchemaError, errorMessage } from '../errors.js';
import { failure, success, type Outcome } from '../outcome.js';
import { defineTool } from '../tools/define-tool.js';
import type { Args } from '../protocol/types.js';
import type { Tool, ToolRetryPolicy } from '../tools/types.js';
import { callResultOutput } from './call-result.js';
import { convertSchema } from './convert-schema.js';
import type { ListedTool, McpConnection } from './mcp-connection.js';
import type { McpApprovalPolicy, McpToolAnnotations, McpToolInfo } from './mcp-options.js';

/** Characters of a server's tool description kept: it goes into every prompt that offers the tool. */
const MAX_DESCRIPTION = 8_000;

/** How one server's tools are made: the connection they call through and the host's policies. */
export type ToolSetup = {
  server: string;
  connection: McpConnection;
  approval: McpApprovalPolicy;
  timeoutMs: number | undefined;
  retry: ToolRetryPolicy | undefined;
};

/** A troupe tool made from a listed MCP tool, and what the approval policy said (or why it failed). */
export type MadeTool = { tool: Tool; approvalProblem?: string };

/**
 * Makes one MCP tool a troupe tool named `toolName`: its schema converted (`convertSchema`), its
 * annotations read as `readOnly`, `idempotent` and `needsApproval`, and an `execute` that calls
 * the server with the troupe signal and reports the server's progress. Fails with the reason when
 * the schema cannot be registered.
 */
export function makeTool(listed: ListedTool, toolName: string, setup: ToolSetup): Outcome<MadeTool, string> {
  if (listed.execution?.taskSupport === 'required') return failure('it runs only as a task (execution.taskSupport "required"), which troupe does not use');
  const converted = convertSchema(listed.inputSchema);
  if (!converted.ok) return failure(converted.problem);
  const annotations = readAnnotations(listed.annotations);
  const description = descriptionOf(listed, annotations);
  const info: McpToolInfo = { server: setup.server, name: listed.name, toolName, description, annotations };
  const approval = needsApproval(setup.approval, info);
  const { renamed } = converted.value;
  const { connection } = setup;
  try {
    const tool = defineTool({
      name: toolName,
      description,
      parameters: converted.value.parameters,
      ...(annotations.readOnlyHint === true && { readOnly: true }),
      ...(annotations.idempotentHint === true && { idempotent: true }),
      ...(approval.value && { needsApproval: true }),
      ...(setup.timeoutMs !== undefined && { timeoutMs: setup.timeoutMs }),
      ...(setup.retry !== undefined && { retry: setup.retry }),
      execute: async (args, context) => {
        const result = await connection.call(listed.name, serverArguments(args, renamed), {
          signal: context.signal,
          onProgress: (update) => context.progress?.(update),
        });
        return callResultOutput(result);
      },
    });
    return success(approval.problem === undefined ? { tool } : { tool, approvalProblem: approval.problem });
  } catch (error) {
    if (!(error instanceof ToolSchemaError)) throw error;
    // The message names the tool already: keep only what is wrong.
    return failure(error.message.replace(/^tool "[^"]*": /, ''));
  }
}

/**
 * The policy's answer for a tool. `'destructive'` follows the spec's defaults: a tool is taken as
 * read-only only when it says so, and a writer as destructive unless it says it is not. A
 * predicate that throws fails closed: the tool asks.
 */
function needsApproval(policy: McpApprovalPolicy, info: McpToolInfo): { value: boolean; problem?: string } {
  if (policy === 'always') return { value: true };
  if (policy === 'never') return { value: false };
  if (policy === 'destructive') return { value: info.annotations.readOnlyHint !== true && info.annotations.destructiveHint !== false };
  try {
    return { value: policy(info) === true };
  } catch (error) {
    return { value: true, problem: `the approval predicate threw (${errorMessage(error)}); the tool asks for approval` };
  }
}

function readAnnotations(raw: Record<string, unknown> | undefined): McpToolAnnotations {
  const annotations: McpToolAnnotations = {};
  if (typeof raw !== 'object' || raw === null) return annotations;
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    if (typeof raw[key] === 'boolean') annotations[key] = raw[key];
  }
  if (typeof raw['title'] === 'string') annotations.title = raw['title'];
  return annotations;
}

function descriptionOf(listed: ListedTool, annotations: McpToolAnnotations): string {
  const text = (typeof listed.description === 'string' && listed.description.trim() !== '' ? listed.description : (annotations.title ?? '')).trim();
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…` : text;
}

/** The arguments as the server names them: root properties renamed for troupe go back to their names. */
function serverArguments(args: Args, renamed: ReadonlyMap<string, string>): Record<string, unknown> {
  // No prototype: a server's parameter may be called `__proto__`.
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, value] of Object.entries(args)) out[renamed.get(key) ?? key] = value;
  return out;
}
