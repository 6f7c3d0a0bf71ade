import type { StandardJSONSchemaV1, StandardTypedV1 } from '@standard-schema/spec';
import type { AgentEngine } from '../agent/agent-options.js';
import type { Bus } from '../bus/bus.js';
import type { ToolFailure, ToolProgress } from '../bus/event-data.js';
import type { Envelope } from '../bus/events.js';
import type { Args, ToolCall } from '../protocol/types.js';
import type { ToolLimiters } from './acquire-slot.js';
import type { FromJsonSchema } from './infer-json-schema.js';

export type { ToolErrorKind, ToolFailure, ToolProgress } from '../bus/event-data.js';

/** The result of one call, in the model's order; `args` is the frozen copy the tool received. */
export type CallResult = (
  | { callId: string; name: string; args: Args; status: 'completed'; output: unknown; durationMs: number; attempts: number }
  | { callId: string; name: string; args: Args; status: 'failed'; error: ToolFailure; durationMs: number; attempts: number }
) & {
  /** The dispatch `clock`'s reading when the first attempt started (absent when none did); the last ended `durationMs` later. */
  startedAt?: number;
};

/** A JSON Schema object as plain data. Tool parameters must be `{ type: 'object', … }`. */
export type JsonSchema = { [key: string]: unknown };

import type { ToolRetryPolicy } from './retry-policy.js';
export type { KindRetry, RetryKind, ToolRetryPolicy } from './retry-policy.js';

/** Attempts and delays of a retry (a model call's, `modelRetry`; a tool's is `ToolRetryPolicy`). */
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
  /**
   * The dispatcher running this call, for tools that run other tools (skills do: `defineSkill`).
   * A getter on the context's prototype, made on first read: tools that never read it pay
   * nothing, and a copy of the context (`{ ...context }`) does not carry it. Undefined in a
   * context that the dispatcher did not make.
   */
  readonly dispatcher?: CallDispatcher;
  /**
   * Reports how far the call has got, published as `tool.progress` with this call's id and tool
   * name (its `cause` is the attempt's `tool.started`). Reports after the attempt has ended are
   * dropped. A method on the context's prototype, like `dispatcher`: a copy of the context does
   * not carry it, and it is undefined in a context the dispatcher did not make.
   *
   * @example
   * execute: async ({ files }, context) => {
   *   for (const [index, file] of files.entries()) {
   *     await upload(file, context.signal);
   *     context.progress?.({ progress: index + 1, total: files.length, message: `uploaded ${file}` });
   *   }
   * }
   */
  progress?(update: ToolProgress): void;
};

/**
 * The dispatcher that runs a call, as that call sees it (`context.dispatcher`). Calls made through
 * it are nested calls: they run under the calling attempt's signal, with the agent's per-tool
 * limiters, write-ahead check, clock and defaults, but without its global limiter, whose slot the
 * calling tool already holds (p-limit deadlocks when a task waits for its own limiter).
 */
export type CallDispatcher = {
  /**
   * Tool names of the calls this call is nested in, outermost first (`DispatchOptions.enclosing`);
   * undefined for a call of a dispatch that was not dispatched from inside a tool.
   */
  readonly enclosing: readonly string[] | undefined;
  /** The id of this attempt's `tool.started` event: the `cause` of the nested calls' events. */
  readonly startedId: string;
  /** The bus the agent publishes on, when the dispatcher was given it (`DispatchOptions.bus`). */
  readonly bus: Bus | undefined;
  /** The per-tool limiters this dispatcher uses; shared with the agent, and the scene if any. */
  readonly toolLimiters: ToolLimiters;
  /** The dispatching agent's engine, when not the compiled table (`DispatchOptions.engine`). */
  readonly engine: AgentEngine | undefined;
  /** The write-ahead check the calls of this dispatcher go through, if any. */
  readonly assertRecorded: ((event: Envelope<'tool.started'>) => void | Promise<void>) | undefined;
  /**
   * Runs validated calls one at a time, in order, as nested calls of this one (`enclosing` is
   * the nesting they run at, this call's name last). Like `dispatchCalls`, it never rejects for a
   * tool's failure; it rejects on a host failure (a `tool.started` the log could not record),
   * which also stops the calling dispatch.
   */
  dispatch(calls: readonly { call: ToolCall; tool: Tool }[], enclosing: readonly string[]): Promise<CallResult[]>;
};

/**
 * A call's arguments before they are checked: for a native call the parsed JSON object; for an
 * XML call each argument's text as written (a repeated element gives an array of texts). Values
 * returned for an XML call are read back the same way: strings as argument text, anything else
 * as JSON text.
 */
export type LooseArgs = Record<string, unknown>;

/** What `prepareArguments` is told about the call. */
export type PrepareContext = {
  callId: string;
  /** The tool's name. */
  name: string;
  /** How the model wrote the call: an `<ACTION>` element or a native function call. */
  format: 'xml' | 'native';
};

/**
 * What a tool's `parameters` may be: a JSON Schema object (draft-07 or 2020-12; written inline or
 * `as const`, it types the arguments), or a Standard Schema that can give its JSON Schema (zod 4,
 * arktype, valibot through `toStandardJsonSchema`): see `docs/tools.md`.
 */
export type ToolParameters = (JsonSchema & { readonly '~standard'?: never }) | StandardJSONSchemaV1;

/**
 * The arguments `execute` receives for a tool with these `parameters`: a Standard Schema's output
 * type, the type a JSON Schema literal describes, or `Args` when neither says more.
 */
export type ArgsOf<TParameters> = TParameters extends StandardTypedV1
  ? ObjectArgs<StandardTypedV1.InferOutput<TParameters>>
  : ObjectArgs<FromJsonSchema<TParameters>>;

/** `TArgs` when it is an object type, else `Args` (a schema whose type cannot be read). */
type ObjectArgs<TArgs> = unknown extends TArgs ? Args : TArgs extends Args ? TArgs : Args;

/** The options of `defineTool` but `parameters`, typed by the arguments `execute` receives. */
export type ToolOptions<TArgs extends Args = Args, TOutput = unknown> = {
  /** `^[A-Za-z][A-Za-z0-9_-]{0,63}$`, not a reserved or prototype name. */
  name: string;
  description: string;
  /** May run concurrently with other read-only calls of the same dispatch (default false). */
  readOnly?: boolean;
  /** Per-attempt time limit; the signal aborts when it passes (default 30 s; 0 disables). */
  timeoutMs?: number;
  /**
   * Retry policy for retryable failures (default: no retry), with attempts and delays per kind of
   * failure if wanted (`byKind`). Only `readOnly` or `idempotent` tools are retried (docs/dispatch.md).
   */
  retry?: ToolRetryPolicy;
  /** Safe to run twice: writers are retried only when this is true. */
  idempotent?: boolean;
  /** Park the agent for approval before running: always, or when the predicate says so. */
  needsApproval?: boolean | Bivariant<(args: TArgs) => boolean | Promise<boolean>>;
  /**
   * Hold the call's result for approval before the model sees it: always, or when the predicate
   * says so. A predicate that throws withholds the result (fails closed). Failed calls are not held.
   */
  needsResultApproval?: boolean | Bivariant<(output: TOutput, args: TArgs) => boolean | Promise<boolean>>;
  /**
   * Maps loose or legacy arguments before they are checked (renamed or moved parameters, old
   * shapes). Its output is checked against `parameters` like anything the model writes; a throw
   * rejects the call with `invalid_arguments`. Synchronous. Returning `undefined` keeps the input.
   */
  prepareArguments?: (args: LooseArgs, context: PrepareContext) => LooseArgs | undefined;
  /** String parameters kept verbatim (only one leading and trailing newline removed). */
  verbatimParams?: readonly string[];
  /** At most this many concurrent executions of this tool per dispatcher. */
  concurrency?: number;
  execute: Bivariant<(args: TArgs, context: ToolContext) => TOutput | Promise<TOutput>>;
};

/** The options of `defineTool`: `execute`'s arguments are typed by `parameters` (`ArgsOf`). */
export type ToolDefinition<TParameters extends ToolParameters = ToolParameters, TOutput = unknown> = ToolOptions<ArgsOf<TParameters>, TOutput> & {
  /**
   * The arguments' schema: a JSON Schema with `type: 'object'` (draft-07 or 2020-12) that passes
   * AJV's secure meta-schema, or a Standard Schema of an object that can give its JSON Schema.
   */
  parameters: TParameters;
};

/**
 * A registered, validated tool: what `defineTool` returns. Inert until an agent dispatches it.
 * `parameters` is the JSON Schema (draft-07) the arguments are validated with and the model is
 * shown, whatever form the definition gave.
 */
export type Tool<TArgs extends Args = Args, TOutput = unknown> = Readonly<ToolOptions<TArgs, TOutput>> & {
  readonly kind: 'tool';
  readonly parameters: JsonSchema;
};

/**
 * A function type checked bivariantly in its parameters, as methods are. A typed tool
 * (`Tool<{ item: string }>`) then fits wherever `Tool` is expected — a `tools` list mixes tools of
 * many argument types — while `execute` itself stays typed for the tool's author.
 */
type Bivariant<F extends (...args: never[]) => unknown> = { method(...args: Parameters<F>): ReturnType<F> }['method'];
