import type { CallRecord } from '../bus/events.js';
import type { ChatMessage, ModelResponse, Usage } from '../llm/types.js';
import type { CallRejection, Issue, MalformedProblem, ParsedOutput, ToolCall } from '../protocol/types.js';
import type { CallResult } from '../tools/dispatch-turn.js';
import type { Tool } from '../tools/types.js';
import type { PendingObservation, RunResult } from './agent-options.js';
import type { RepairedNote } from './observation-text.js';
import type { BudgetRefusal } from './budget.js';

/** A validated call with its tool and, when gated, its approval state. */
export type TurnCall = {
  call: ToolCall;
  tool: Tool;
  /** `false`: runs without asking. Otherwise the predicate's answer, pending answer, or its error. */
  gate: boolean | Promise<boolean> | Error;
  /** Set once the host (or a failing predicate) decided. */
  decision?: { approved: boolean; reason: string };
  /** Set once the decision was published; the turn moves on when every gated call has one. */
  announced?: boolean;
  /** Stable form of the requested arguments, to bind an approval to them. */
  argsKey?: string;
  /** SHA-256 of `argsKey`, as `tool.approval.requested` published it. */
  argsHash?: string;
  /** For a completed call of a tool with `needsResultApproval`: whether its result is held. */
  resultGate?: boolean | Promise<boolean> | Error;
  /**
   * SHA-256 of the held output's stable key, set when `tool.result.approval.requested` publishes
   * it: the result is pending from then on.
   */
  outputHash?: string;
  /** The host's (or a failing predicate's) decision on the held result. */
  resultDecision?: { approved: boolean; reason: string };
  /** Set once the result decision was published. */
  resultAnnounced?: boolean;
};

/** What the current turn produced, for the guards and the observation. */
export type Turn =
  | { kind: 'none' }
  | { kind: 'malformed'; problem: MalformedProblem }
  | { kind: 'empty' }
  | { kind: 'rejected'; rejection: CallRejection; callCount: number }
  | { kind: 'calls'; calls: TurnCall[]; results?: CallResult[]; repaired?: RepairedNote };

/** The mutable state of one `agent.run`. */
export type RunState = {
  number: number;
  controller: AbortController;
  resolve: (result: RunResult) => void;
  messages: ChatMessage[];
  startedAt: number;
  round: number;
  corrections: number;
  /** Rejected calls a repair fixed. */
  repairs: number;
  nudging: boolean;
  usage: Usage;
  history: CallRecord[];
  dispatched: number;
  response?: ModelResponse;
  parsed?: ParsedOutput;
  /** What the streaming scanner parsed of this round's output (XML), for the parse stage. */
  streamed?: ParsedOutput | undefined;
  turn: Turn;
  /** A scene turn's rounds: when spent, the run ends with `turn_ended` instead of the nudge. */
  turnRounds?: number;
  /** The observation of the last round, until the model has seen it. */
  observation?: PendingObservation;
  /** Set when a budget refused a checkpoint: the run ends with `budget`. */
  budgetRefusal?: BudgetRefusal;
  /** The last visible text the model wrote. */
  text: string;
  /** Why the run failed, when it did. */
  error?: string;
  lastIssues?: Issue[];
  /** The id of the event the next one follows from (envelope `cause`). */
  cause?: string;
  finished: boolean;
  /** Removes the listener on the caller's signal, if one was given. */
  detach?: () => void;
};
