import type { LimitFunction } from 'p-limit';
import type { AgentEngine } from '../agent/agent-options.js';
import type { Bus, Publish } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import type { ToolCall } from '../protocol/types.js';
import type { ToolLimiters } from './acquire-slot.js';
import type { DispatchStats } from './dispatch-stats.js';
import type { CallResult, Tool, ToolFailure } from './types.js';

export type { CallResult } from './types.js';

/**
 * How a call's attempt went, as a journal (a resume's log) recorded it: completed, failed, or
 * started and never ended (`interrupted`: the process stopped while it ran).
 */
export type RecordedAttempt = RecordedEnd | { kind: 'interrupted'; then?: RecordedEnd };

/**
 * How an attempt ended, as recorded. After `interrupted`, `then` is the end an earlier resume
 * recorded for it (the rerun's result, or the failure that said its outcome was unknown).
 */
export type RecordedEnd = { kind: 'completed'; output: unknown } | { kind: 'failed'; error: ToolFailure };

/** A validated call and the tool that runs it. */
export type CallEntry = { call: ToolCall; tool: Tool };

/** The options of `dispatchCalls`: where it reports, what stops it, and its limits. */
export type DispatchOptions = {
  /** Agent abort or scene stop. */
  signal: AbortSignal;
  /**
   * A flag that turns true whenever `signal` aborts, kept by whoever aborts it (an agent's run):
   * read instead of `signal.aborted`, whose getter checks its receiver, between every two calls.
   * Given it, `signal` is read only once something waits on it, so it may be a getter that makes
   * the signal then.
   */
  abortFlag?: { readonly aborted: boolean };
  agent: string;
  scene?: string;
  publish: Publish;
  /** Global limiter, possibly shared by many agents; never `clearQueue`d by the dispatcher. */
  limiter?: LimitFunction;
  /** Per-tool limiters (`tool.concurrency`), created lazily; share one map to share the limits. */
  toolLimiters?: ToolLimiters;
  /** Run one call at a time in model order even when all are read-only (approval in the dispatch). */
  sequential?: boolean;
  /**
   * Write-ahead check: throws when the log could not record this `tool.started`; returns a promise
   * when the record is not yet on disk, and the tool runs once it is.
   */
  assertRecorded?: (event: Envelope<'tool.started'>) => void | Promise<void>;
  /** For tools without `timeoutMs` (default 30 000; 0 = no limit). */
  defaultTimeoutMs?: number;
  /** Waits between retries; rejects or resolves early when the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** How long a tool may ignore its aborted signal before `tool.zombie` `pending` (default 1000). */
  zombieGraceMs?: number;
  /** Counters (zombies, timeouts, retries) updated as calls run. */
  stats?: DispatchStats;
  /**
   * Where every `durationMs` comes from (default `performance.now`). Pass the bus clock so that
   * scripted runs publish identical events. Timeouts still run on real (or faked) timers.
   */
  clock?: () => number;
  /**
   * The bus `publish` publishes on. Tools that run other tools need it: a nested call's events
   * name the call that made it as their `cause`, and a skill's child agent runs on it.
   */
  bus?: Bus;
  /**
   * Tool names of the calls this dispatch's calls are nested in, outermost first. Set by
   * `context.dispatcher.dispatch`; skills read it to refuse recursion and deep nesting.
   */
  enclosing?: readonly string[];
  /**
   * A resume's journal: for an attempt the log recorded, the way it went (at once, or when the
   * resume reaches it), so that a call whose end is on record never runs again; `undefined`: run it.
   */
  journal?: (call: ToolCall, attempt: number) => RecordedAttempt | Promise<RecordedAttempt> | undefined;
  /**
   * What steps the dispatching agent's statechart (`AgentOptions.engine`), when not the compiled
   * table: a skill's child agent takes it unless its own options name one.
   */
  engine?: AgentEngine;
};

/** `dispatchCalls`'s shape, for the modules that run nested calls through it. */
export type DispatchCalls = (calls: readonly CallEntry[], options: DispatchOptions) => Promise<CallResult[]>;
