import type { LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import type { AgentStateName } from '../../machines/agent.machine.js';
import type { Bus } from '../bus/bus.js';
import type { CallRecord, RunReason, RunStats } from '../bus/events.js';
import type { Provider, ToolChoice, Usage } from '../llm/types.js';
import type { Args, Issue, ProtocolLimits } from '../protocol/types.js';
import type { SessionLog } from '../record/session-log.js';
import type { Budget, BudgetLimits } from './budget.js';
import type { AgentMemory, MemoryOptions } from './memory/agent-memory.js';
import type { ObservedCall } from './observation-text.js';
import type { RetryPolicy, Tool } from '../tools/types.js';

/** The options of `createAgent` (DESIGN.md §8). */
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
  /** Protocol limits (PROTOCOL.md), per agent. */
  limits?: Partial<ProtocolLimits>;
  /** Concurrent tool executions for this agent (default 8). Ignored when `limiter` is given. */
  concurrency?: number;
  /** A p-limit limiter shared with other agents (a global cap on tool executions). */
  limiter?: LimitFunction;
  /** Retries of failed model calls (default 3 attempts, 500 ms doubling, `retry-after` honoured). */
  modelRetry?: RetryPolicy;
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
   * Keep the conversation between runs, under a token budget (docs/memory.md). Without it (the
   * default) every run starts from the system prompt and its input alone. `true` takes the defaults.
   */
  memory?: MemoryOptions | boolean;
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
};

/** An observation the model has not seen yet: the last round's outcome at the end of a turn. */
export type PendingObservation = {
  text: string;
  ok: boolean;
  /** The round's calls with their results, for scripted brains. */
  calls: readonly ObservedCall[];
};

/** What `agent.run` resolves with. It never rejects for the model's mistakes. */
export type RunResult = {
  reason: RunReason;
  /** The final visible text (the model's answer, or the last thing it said). */
  text: string;
  rounds: number;
  /** Every call of the run with its outcome and duration, in order. */
  calls: CallRecord[];
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
export type PendingApproval = { callId: string; name: string; args: Args };

/** A live agent: an XState actor plus its provider, tools and bus. */
export type Agent = {
  readonly name: string;
  readonly bus: Bus;
  /** The machine's current state. */
  readonly state: AgentStateName;
  /**
   * Runs the cycle on one input until the model answers, rounds run out, the run is aborted or
   * fails. Rejects only on host errors (a second concurrent run, a closed agent).
   */
  run(input: string, options?: RunOptions): Promise<RunResult>;
  /** Calls parked for approval in the current turn. */
  pendingApprovals(): PendingApproval[];
  /**
   * Lets a parked call run. Returns false (and logs) when there is no such pending call, the run
   * was aborted, or `args` is given and differs from the arguments that were requested.
   */
  approve(callId: string, options?: { args?: Args }): boolean;
  /** Refuses a parked call; the model is told it was `denied`, with the reason. */
  deny(callId: string, reason?: string): boolean;
  /** Aborts the current run: in-flight model and tool calls get their signals aborted. */
  abort(reason?: string): void;
  /** Stops the actor and closes the session log this agent opened. */
  close(): Promise<void>;
  /** The history kept between runs, when the agent has the `memory` option; else `undefined`. */
  readonly memory: AgentMemory | undefined;
};
