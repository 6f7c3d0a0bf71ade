import type { CallRecord } from '../../bus/event-data.js';
import type { ChatMessage, ModelResponse, Usage } from '../../llm/types.js';
import type { CallRejection, Issue, MalformedProblem, ParsedOutput, ToolCall } from '../../protocol/types.js';
import type { CallResult } from '../../tools/dispatch-calls.js';
import type { BudgetRefusal } from '../budget.js';
import type { ObservedCall, RepairedNote } from '../observation-text.js';
import type { CallHistoryEntry, ModelCallRecord } from './run-record.js';

/**
 * Where one approval stands: the same record serves a call's approval and its result's.
 *
 * - `checking`: the tool's predicate is still deciding whether to ask.
 * - `ask`: the host must decide; not yet requested on the bus.
 * - `refused`: the predicate threw; refused without asking (the gate fails closed).
 * - `requested`: published (`…approval.requested`) with the SHA-256 `hash` a decision binds to.
 * - `decided`: approved or not; `announced` once the decision was published.
 */
export type Approval =
  | { status: 'checking' }
  | { status: 'ask' }
  | { status: 'refused'; reason: string }
  | { status: 'requested'; hash: string }
  | { status: 'decided'; approved: boolean; reason: string; asked: boolean; announced: boolean };

/** A validated call of the round, with its approvals and, once dispatched, its result. */
export type RoundCall = {
  call: ToolCall;
  /** Absent when the call runs without asking. */
  approval?: Approval;
  /** Set once the call ran (completed or failed). */
  result?: CallResult;
  /** For a completed call of a tool with `needsResultApproval`: whether the model may see it. */
  resultApproval?: Approval;
};

/**
 * What the current round's reply came to, for the guards and the observation. `recorded`: the
 * calls are in the run's history already.
 */
export type RoundOutcome =
  | { kind: 'none' }
  | { kind: 'malformed'; problem: MalformedProblem }
  | { kind: 'empty' }
  /** A reply without a call when `toolChoice` asked for one. */
  | { kind: 'uncalled'; tool?: string }
  /** A final answer that is not JSON, or does not match the `output` schema. */
  | { kind: 'invalid_output'; issues: Issue[] }
  | { kind: 'rejected'; rejection: CallRejection; callCount: number; recorded?: true }
  | { kind: 'calls'; calls: RoundCall[]; repaired?: RepairedNote; recorded?: true };

/** The outcomes of a reply the model must write again, with nothing run: each a correction. */
export type UnreadReply = Extract<RoundOutcome, { kind: 'malformed' | 'empty' | 'uncalled' | 'invalid_output' }>;

const UNREAD_KINDS: ReadonlySet<RoundOutcome['kind']> = new Set(['malformed', 'empty', 'uncalled', 'invalid_output']);

/** Whether a round's outcome is a reply to write again (a malformed block, no call when one was asked for, …). */
export function isUnreadReply(outcome: RoundOutcome): outcome is UnreadReply {
  return UNREAD_KINDS.has(outcome.kind);
}

/** An observation the model has not seen yet: the last round's outcome at the end of a turn. */
export type PendingObservation = {
  text: string;
  ok: boolean;
  /** The round's calls with their results, for scripted brains. */
  calls: readonly ObservedCall[];
};

/**
 * One `agent.run` as plain data: everything needed to continue it, and nothing live (no signal,
 * no callback, no tool). A snapshot of it (`agent.snapshot()`) survives `JSON.stringify` once its
 * image bytes are encoded, and the run goes on from it in a new agent (`agent.resume`).
 */
export type RunState = {
  /** The agent's count of runs: call ids are `<agent>/<number>.<round>.<n>`. */
  number: number;
  messages: ChatMessage[];
  startedAt: number;
  round: number;
  corrections: number;
  /** Rejected calls a repair fixed. */
  repairs: number;
  /** The next (or current) deliberation is the final-answer nudge. */
  nudging: boolean;
  usage: Usage;
  /** The call history as `agent.finished` carries it. */
  history: CallRecord[];
  /**
   * The same calls in full (arguments, outputs, errors, times), and the rejected ones:
   * `result.calls`. Made at the first call: a crowd parked at its first model call holds none.
   */
  calls?: CallHistoryEntry[];
  /** One record per model call: `result.modelCalls`; made at the first answer. */
  modelCalls?: ModelCallRecord[];
  /** How many of `messages` the run started with (system prompt, kept history, input). */
  contextLength: number;
  dispatched: number;
  /**
   * When the current round's model call was sent (set until the model answers). A run continued
   * in `deliberating` with it set asks the model again, as it was asked.
   */
  askedAt?: number;
  /** The messages `onBeforeModel` gave the current round's model call in place of the history. */
  askedMessages?: ChatMessage[];
  response?: ModelResponse;
  parsed?: ParsedOutput;
  /** What the streaming scanner parsed of this round's output (XML), for the parse stage. */
  streamed?: ParsedOutput;
  outcome: RoundOutcome;
  /** A scene turn's rounds: when spent, the run ends with `turn_ended` instead of the nudge. */
  roundLimit?: number;
  /** The observation of the last round, until the model has seen it. */
  observation?: PendingObservation;
  /** Set when a budget refused a checkpoint: the run ends with `budget`. */
  budgetRefusal?: BudgetRefusal;
  /** The last visible text the model wrote. */
  text: string;
  /** The final answer parsed and validated, with an `output` schema. */
  output?: unknown;
  /** Why the run failed, when it did. */
  error?: string;
  lastIssues?: Issue[];
  /** The id of the event the next one follows from (envelope `cause`). */
  cause?: string;
  finished: boolean;
};

/** The outcome of a round that has produced nothing yet. Shared: it is never written to. */
export const NO_OUTCOME: RoundOutcome = Object.freeze({ kind: 'none' });

/** A new run's state, before its first deliberation. */
export function newRunState(number: number, messages: ChatMessage[], startedAt: number): RunState {
  return {
    number,
    messages,
    startedAt,
    round: 0,
    corrections: 0,
    repairs: 0,
    nudging: false,
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    history: [],
    contextLength: messages.length,
    dispatched: 0,
    outcome: NO_OUTCOME,
    text: '',
    finished: false,
  };
}

const NO_RECORDS: CallRecord[] = Object.freeze([]) as unknown as CallRecord[];

/**
 * Lets go of what a finished run holds beyond its result (which keeps what it reports). A run's
 * state is made before its model call, so a long wait moves it to the old generation; from there a
 * dead run would keep everything its last round made alive through every minor collection until a
 * major one, since V8 takes old objects' references as roots. A round of 64,000 turns copied 1.4 KB
 * a turn more for it.
 */
export function releaseRun(run: RunState): void {
  run.response = undefined;
  run.parsed = undefined;
  run.streamed = undefined;
  run.outcome = NO_OUTCOME;
  run.observation = undefined;
  run.askedMessages = undefined;
  run.history = NO_RECORDS;
  run.calls = undefined;
  run.modelCalls = undefined;
  run.lastIssues = undefined;
  run.output = undefined;
  run.cause = undefined;
}

/** The round's calls, when the round produced calls. */
export function roundCalls(run: RunState): RoundCall[] {
  return run.outcome.kind === 'calls' ? run.outcome.calls : [];
}

/**
 * `list` with `item` at its end: `list` itself, or a new one-item list when there was none or an
 * empty one. V8 gives an empty array 16 slots at its first push (152 bytes), and a run's records
 * usually hold one item: a crowd step made four such lists.
 */
export function pushTo<T>(list: T[] | undefined, item: T): T[] {
  if (list === undefined || list.length === 0) return [item];
  list.push(item);
  return list;
}
