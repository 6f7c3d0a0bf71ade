import type { Args } from '../protocol/types.js';

/** A JSON Schema object as plain data. Tool parameters must be `{ type: 'object', … }`. */
export type JsonSchema = { [key: string]: unknown };

/** Why a tool call failed (DESIGN.md §2). */
export type ToolErrorKind = 'execution' | 'timeout' | 'network' | 'permission' | 'not_found' | 'aborted' | 'unknown';

/** A tool failure as the bus and the model see it. */
export type ToolFailure = {
  kind: ToolErrorKind;
  message: string;
  retryable: boolean;
  /** What the model could do about it ("check the path exists"), when troupe can tell. */
  hint?: string;
};

/** How a failing call is retried. Writers retry only when the tool is `idempotent`. */
export type RetryPolicy = {
  /** Total attempts including the first (default 1: no retry). */
  attempts: number;
  /** Delay before the second attempt, doubled each time (default 100 ms). */
  backoffMs?: number;
  /** Upper bound on one delay (default 5 s). */
  maxBackoffMs?: number;
};

/** What a tool's `execute` receives beside its arguments. */
export type ToolContext = {
  /** Aborted on agent abort, scene stop, or the tool's `timeoutMs`. Pass it to fetch and friends. */
  signal: AbortSignal;
  /** The calling agent's name. */
  agent: string;
  /** The scene's id, when the agent runs in one. */
  scene?: string;
  callId: string;
  /** 1 for the first attempt. */
  attempt: number;
};

/** The options of `defineTool` (DESIGN.md §8). */
export type ToolDefinition<TArgs extends Args = Args, TOutput = unknown> = {
  /** `^[A-Za-z][A-Za-z0-9_-]{0,63}$`, not a reserved or prototype name. */
  name: string;
  description: string;
  /** A JSON Schema with `type: 'object'`; it must pass AJV's secure meta-schema. */
  parameters: JsonSchema;
  /** May run concurrently with other read-only calls of the same turn (default false). */
  readOnly?: boolean;
  /** Per-attempt time limit; the signal aborts when it passes (default 30 s; 0 disables). */
  timeoutMs?: number;
  /** Retry policy for retryable failures (default: no retry). */
  retry?: RetryPolicy;
  /** Safe to run twice: writers are retried only when this is true. */
  idempotent?: boolean;
  /** Park the agent for approval before running: always, or when the predicate says so. */
  needsApproval?: boolean | ((args: TArgs) => boolean | Promise<boolean>);
  /** String parameters kept verbatim (only one leading and trailing newline removed). */
  verbatimParams?: readonly string[];
  /** At most this many concurrent executions of this tool per dispatcher. */
  concurrency?: number;
  execute: (args: TArgs, context: ToolContext) => TOutput | Promise<TOutput>;
};

/** A registered, validated tool: what `defineTool` returns. Inert until an agent dispatches it. */
export type Tool<TArgs extends Args = Args, TOutput = unknown> = Readonly<ToolDefinition<TArgs, TOutput>> & {
  readonly kind: 'tool';
};
