import type { LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import type { AgentStateName } from '../../machines/agent.machine.js';
import type { Bus } from '../bus/bus.js';
import type { RunReason, RunStats } from '../bus/events.js';
import type { ChatMessage, MessageImage, ModelResponse, Provider, ToolChoice, Usage } from '../llm/types.js';
import type { Args, CallRejection, Issue, ProtocolLimits } from '../protocol/types.js';
import type { SessionLog } from '../record/session-log.js';
import type { Budget, BudgetLimits } from './budget.js';
import type { PriceTable } from '../llm/prices.js';
import type { ManifestExample } from '../protocol/manifest.js';
import type { AgentMemory, MemoryOptions } from './memory/agent-memory.js';
import type { AgentSnapshot } from './run/agent-snapshot.js';
import type { CallHistoryEntry, ModelCallRecord } from './run/run-record.js';
import type { PendingObservation } from './run/run-state.js';
import type { RunInput } from './run/run-input.js';
import type { AgentStream, AgentStreamOptions } from './stream/agent-stream.js';
import type { JsonSchema, LooseArgs, Tool } from '../tools/types.js';
import type { ModelRetryPolicy } from './call-model.js';
import type { AgentInspect } from './xstate-engine.js';
import type { OutputSchema } from './output-schema.js';

/** The options of `createAgent` (docs/agent-cycle.md lists them with their defaults). */
export type AgentOptions = {
  /** Names the agent on the bus; also the prefix of its call ids. */
  name: string;
  /** The system prompt's opening; the tool manifest and format rules follow it. */
  instructions?: string;
  tools?: readonly Tool[];
  provider: Provider;
  /** `'xml'` (default, any text model) or `'native'` (the provider's function calling). */
  protocol?: 'xml' | 'native';
  /** The tools this agent may call (default: all of `tools`). Others are `not_permitted`. */
  allowedTools?: readonly string[];
  /** Deliberations before the final-answer nudge (default 10). */
  maxRounds?: number;
  /** Consecutive turns of only malformed or rejected calls before the run fails (default 3). */
  maxCorrections?: number;
  /** Share a bus with other agents and panels (default: a new one). */
  bus?: Bus;
  /** The scene this agent belongs to, stamped on its events. */
  scene?: string;
  /** Protocol limits (docs/protocol.md, Limits), per agent. */
  limits?: Partial<ProtocolLimits>;
  /** Concurrent tool executions for this agent (default 8). Ignored when `limiter` is given. */
  concurrency?: number;
  /** A p-limit limiter shared with other agents (a global cap on tool executions). */
  limiter?: LimitFunction;
  /**
   * Retries of failed model calls (default 3 attempts, 500 ms doubling up to 30 s); a provider's
   * `retry-after` is waited exactly up to `maxRetryAfterMs` (default 60 s), and one over it fails
   * the call at once with an `llm.error` that says so.
   */
  modelRetry?: ModelRetryPolicy;
  /** Default per-call tool timeout when a tool sets none (default 30 s; 0 disables). */
  toolTimeoutMs?: number;
  /** Characters of one tool output shown to the model before it is cut with a marker (default 8,000). */
  maxObservationChars?: number;
  /** Append every bus event to this JSONL file, or to a session log you created. */
  log?: string | SessionLog;
  /** A pino logger (default: silent). */
  logger?: Logger;
  temperature?: number;
  maxTokens?: number;
  /**
   * Stream model output when the provider can (default true): `llm.delta` as the model writes, the
   * generation stopped once `</ACTION>` closes. `false` waits for whole responses.
   */
  stream?: boolean;
  /** How native function calling may use the tools: `auto` (default), `required` or `none`. */
  toolChoice?: ToolChoice;
  /** Caps on model calls, tokens, tool calls and wall time over the agent's life (a Budget can be shared). */
  budget?: BudgetLimits | Budget;
  /**
   * Prices by model name, USD per million tokens, over troupe's defaults (`DEFAULT_PRICES`): each
   * call's usage gets its `costUsd`, and a `costUsd` budget needs the model priced (docs/budgets.md).
   */
  prices?: PriceTable;
  /**
   * Your own example replies for the manifest, in place of those troupe builds from the tools (XML
   * protocol; docs/protocol.md, The manifest). Each is checked against the tools at creation.
   */
  examples?: readonly ManifestExample[];
  /**
   * Rewrites what is sent to the model, just before each call (trim, summarise, inject). Gets a
   * copy of the history: changing it changes only this request. Returning `undefined` sends the
   * history as it is. A throw, or a value that is not a list of messages, fails the run (`error`).
   */
  onBeforeModel?: (messages: ChatMessage[], context: BeforeModelContext) => ChatMessage[] | undefined | Promise<ChatMessage[] | undefined>;
  /**
   * Tries to fix a rejected call before the model hears of the rejection: at most once per turn,
   * between validating and observing. What it returns is validated again (never trusted) and, if
   * it passes, runs as if the model had written it; the model is told what was fixed. Every
   * attempt is on the bus (`tool.repaired`, `tool.repair.failed`). See `repairWithModel`.
   */
  repair?: RepairFunction;
  /**
   * Keep the conversation between runs, under a token budget (docs/memory.md). Without it (the
   * default) every run starts from the system prompt and its input alone. `true` takes the defaults.
   */
  memory?: MemoryOptions | boolean;
  /**
   * Seeds the agent's random numbers (retry jitter; a scene member's brain draws from them too),
   * so that a scripted run repeats exactly. Default: a seed drawn when they are first needed.
   */
  seed?: number;
  /**
   * What steps the agent's statechart. `'compiled'` (default): a transition table compiled once
   * from the XState machine, for all agents — the fast path. `'xstate'`: a live XState actor of
   * the agent's own (`createActor` on the same machine, with the same actions and guards), for
   * watching the real machine in an inspector (`inspect`); the same events in the same order, at
   * some 25–30 µs more per run (docs/xstate.md). A scene's members and a skill's child agent take
   * the engine of their scene or parent unless they name their own.
   */
  engine?: AgentEngine;
  /**
   * With `engine: 'xstate'`: an XState inspection observer given to the agent's actor, as
   * `createActor(machine, { inspect })` takes it (`createBrowserInspector().inspect` of
   * `@statelyai/inspect`). A `ConfigError` with the compiled engine: use `inspectAgent` there.
   */
  inspect?: AgentInspect;
  /**
   * Structured output: the final answer must be JSON matching this schema (a JSON Schema of an
   * object, or a Standard Schema such as zod's), and `result.output` is the value, typed by it.
   * An answer that does not parse or validate is a correction, under `maxCorrections`. Native
   * agents send the schema to the provider; XML agents are told in the system prompt
   * (docs/structured-output.md).
   */
  output?: OutputSchema;
};

/** What steps an agent's statechart (`AgentOptions.engine`). */
export type AgentEngine = 'compiled' | 'xstate';

/** What `onBeforeModel` is told about the call it may rewrite. */
export type BeforeModelContext = {
  agent: string;
  /** The deliberation about to run, from 1. */
  round: number;
  /** True for the final-answer nudge. */
  nudge: boolean;
  /** The run's signal: aborted when the run is. */
  signal: AbortSignal;
};

/** A call as a repair returns it: the tool to call (the same one when left out) and its arguments. */
export type RepairedCall = { name?: string; args: LooseArgs };

/** Fixes a rejected call, or returns `undefined` to let the rejection stand. */
export type RepairFunction = (rejection: CallRejection, context: RepairContext) => RepairedCall | undefined | Promise<RepairedCall | undefined>;

/** What a repair is given beside the rejection. */
export type RepairContext = {
  agent: string;
  round: number;
  signal: AbortSignal;
  /**
   * The call as the model wrote it, arguments loose (see `LooseArgs`; `{}` when they could not be
   * read, and then a native call's text is in `argumentsText`).
   */
  call: { callId: string; name: string; format: 'xml' | 'native'; args: LooseArgs; argumentsText?: string };
  /** The tools the agent may call, with their parameters. */
  tools: readonly { name: string; description: string; parameters: JsonSchema }[];
  /**
   * One extra model call (the agent's provider unless another is given). Its usage counts toward
   * the run and the budgets; a repair that calls it is reported as `by: 'model'`.
   */
  complete(messages: ChatMessage[], options?: { provider?: Provider; maxTokens?: number }): Promise<ModelResponse>;
};

/** Per-run options of `agent.run`. */
export type RunOptions = {
  /** Aborts the run like `agent.abort()`. */
  signal?: AbortSignal;
  /**
   * Makes the run one turn of a scene: at most this many deliberations, then the run ends with
   * `turn_ended` (no final-answer nudge) and its last observation waits in `result.observation`.
   */
  rounds?: number;
  /** The id of the event that started the run (the first event's `cause`). */
  cause?: string;
  /**
   * Images sent with the input, when the provider takes images in user messages (a scene sends
   * the images of the observation its perception repeats); dropped for any other provider. Checked
   * like a rich result's images (media type, bytes of that format, 5 MiB each, 15 MiB in all),
   * whatever the provider: a bad one makes `run` reject with `TroupeError` `invalid_config`. The
   * bytes are copied when the run starts.
   */
  images?: readonly MessageImage[];
};

export type { PendingObservation } from './run/run-state.js';

/**
 * What `agent.run` resolves with. It never rejects for the model's mistakes. `TOutput` is the type
 * of `output` (the agent's `output` schema's).
 */
export type RunResult<TOutput = unknown> = {
  reason: RunReason;
  /** The final visible text (the model's answer, or the last thing it said). */
  text: string;
  /**
   * With an `output` schema: the final answer, parsed and validated (a Standard Schema's output).
   * Absent when the run ended without a valid answer (`error`, `max_rounds` with an invalid one…).
   */
  output?: TOutput;
  rounds: number;
  /**
   * Every call of the run, in order: its outcome, duration and attempts (as `stats.history`), with
   * its arguments, its output or error, when it ran, and for a refused call why (`rejection` for a
   * call the protocol rejected — these are here only, not in `stats.history` — `reason` for a
   * denied call or a withheld result). Outputs and arguments are the run's values, not copies.
   */
  calls: CallHistoryEntry[];
  /** Every model call of the run, one per round: its latency, how it ended and its usage. */
  modelCalls: ModelCallRecord[];
  /**
   * The run's whole conversation: the system prompt, kept history and input (the first
   * `contextLength` messages), then the model's replies and the observations (the tool chain). The
   * run's own list, not a copy: nothing changes it once the run has ended.
   */
  messages: ChatMessage[];
  /** How many of `messages` the run started with: `messages.slice(contextLength)` is what the run added. */
  contextLength: number;
  usage: Usage;
  stats: RunStats;
  /** Why the run ended, for `error` and `aborted`. */
  error?: string;
  /** The problems of the last rejected turn, when corrections ran out. */
  issues?: Issue[];
  /** With `turn_ended` (and `budget`, `aborted`): the last observation, not yet seen by the model. */
  observation?: PendingObservation;
};

/** A call waiting for the host's decision. */
export type PendingApproval = { callId: string; name: string; args: Args; argsHash: string };

/** A completed call whose result waits for the host's decision before the model sees it. */
export type PendingResultApproval = { callId: string; name: string; args: Args; output: unknown; outputHash: string };

/**
 * A live agent: a provider, tools and a bus, driven through the XState v5 agent statechart
 * (`machines/agent.machine.ts`). The statechart is stepped by a table compiled from it, or, with
 * `engine: 'xstate'`, by an XState actor; conformance tests hold the two to the same transitions
 * and the same events.
 */
export type Agent<TOutput = unknown> = {
  readonly name: string;
  readonly bus: Bus;
  /** The machine's current state. */
  readonly state: AgentStateName;
  /**
   * Runs the cycle on one input until the model answers, rounds run out, the run is aborted or
   * fails. `input` is the user's message, or a conversation ending with one (docs/streaming.md).
   * Rejects only on host errors (a second concurrent run, a closed agent, a bad message list).
   */
  run(input: RunInput, options?: RunOptions): Promise<RunResult<TOutput>>;
  /**
   * `run`, as it happens: the run's events (text deltas, calls, results, approvals, the finish) as
   * an async iterable, a `ReadableStream` or a Server-Sent Events `Response`, and its `result`.
   * Throws at once what `run` would reject with (docs/streaming.md).
   */
  stream(input: RunInput, options?: AgentStreamOptions): AgentStream;
  /** Calls parked for approval in the current turn. */
  pendingApprovals(): PendingApproval[];
  /**
   * Lets a parked call run. Returns false (and logs) when there is no such pending call, the run
   * was aborted, `args` is given and differs from the arguments that were requested, or `argsHash`
   * is given and is not the request's (`tool.approval.requested.argsHash`).
   */
  approve(callId: string, options?: { args?: Args; argsHash?: string }): boolean;
  /**
   * Refuses a parked call; the model is told it was `denied`, with the reason. A reason that is
   * not a string throws (`TroupeError` `invalid_config`), like `rejectResult`.
   */
  deny(callId: string, reason?: string): boolean;
  /** Results held for approval in the current turn (tools with `needsResultApproval`). */
  pendingResultApprovals(): PendingResultApproval[];
  /**
   * Lets a held result reach the model. False (and logged) when no such result waits, or
   * `outputHash` is given and is not the request's (`tool.result.approval.requested.outputHash`).
   */
  approveResult(callId: string, options?: { outputHash?: string }): boolean;
  /**
   * Withholds a held result: the model is told `RESULT_REJECTED: <reason>` and never sees the
   * output. False (and logged) when no such result waits; a reason that is not a string throws.
   */
  rejectResult(callId: string, reason?: string): boolean;
  /** Aborts the current run: in-flight model and tool calls get their signals aborted. */
  abort(reason?: string): void;
  /** Stops the actor and closes the session log this agent opened. */
  close(): Promise<void>;
  /** The history kept between runs, when the agent has the `memory` option; else `undefined`. */
  readonly memory: AgentMemory | undefined;
  /**
   * The agent as plain data: the run in progress (if any) with its calls, decisions, results and
   * messages, the memory and the seeded generator; versioned, and unchanged by
   * `JSON.parse(JSON.stringify(snapshot))`. Take it between steps — from a timer, a microtask or
   * an awaited point, not from inside a bus subscriber, which runs in the middle of one (that
   * throws `TroupeError` `agent_busy`).
   */
  snapshot(): AgentSnapshot;
  /**
   * Continues from a snapshot in this agent, made with the same options: restores the memory and
   * the generator, and the run in progress, whose work is taken up again (the model asked again,
   * calls without a result run, pending approvals wait for `approve`/`deny` here). Resolves with
   * that run's result, or `undefined` when the snapshot was taken between runs. Throws
   * `TroupeError` (`invalid_config`) for a snapshot of another agent or version, or when this
   * agent has a run of its own.
   */
  resume(snapshot: AgentSnapshot, options?: ResumeOptions): Promise<RunResult<TOutput> | undefined>;
};

/** Options of `agent.resume`. */
export type ResumeOptions = {
  /** Aborts the continued run like `agent.abort()`. */
  signal?: AbortSignal;
  /**
   * Publish again the approval requests that were waiting (default false). A process that
   * crashed needs this: whoever decides never saw the old agent's requests answered.
   */
  requestAgain?: boolean;
};
