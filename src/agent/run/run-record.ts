import type { Args, CallRecord, CallRejection, FinishReason, ToolFailure, Usage } from '../../bus/event-data.js';
import type { CallResult } from '../../tools/types.js';

/**
 * One call of a run in full, as `result.calls` holds it: its record in the call history (what
 * `agent.finished` carries in `stats.history`) with what it was called with, what it returned or
 * how it failed, when it ran and why it was refused. The values are the run's own, not copies:
 * `args` are the frozen arguments the tool ran with, `output` the value `tool.completed` carried.
 */
export type CallHistoryEntry = CallRecord & {
  /** The validated arguments (absent for `rejected`: they never passed validation). */
  args?: Args;
  /** `completed`: what the tool returned. */
  output?: unknown;
  /** `failed` and `aborted`: the last attempt's failure, as `tool.failed` said it. */
  error?: ToolFailure;
  /**
   * When its first attempt started and its last one ended (`startedAt + durationMs`, to the
   * millisecond), on the bus clock (`Date.now` unless the bus has another); absent for calls that
   * never ran.
   */
  startedAt?: number;
  endedAt?: number;
  /** `rejected`: the protocol's rejection (code, category, the issues, the message the model got). */
  rejection?: CallRejection;
  /** `denied` and `result_rejected`: the reason given. */
  reason?: string;
};

/** One model call of a run (one per round): when it was asked and answered, how it ended, what it cost. */
export type ModelCallRecord = {
  round: number;
  /** True for the final-answer nudge. */
  nudge?: true;
  /** On the bus clock: when `llm.request` was published, and when the reply was in. */
  startedAt: number;
  endedAt: number;
  /** `endedAt - startedAt`, as `llm.response.latencyMs` says it (retries of the call included). */
  latencyMs: number;
  finishReason: FinishReason;
  /** The call's tokens (marked `estimated` when counted by troupe's tokenizer). */
  usage?: Usage;
};

/**
 * The detailed entry of a call that ran (completed, failed, aborted or its result withheld). Built
 * as one literal per outcome, never spread and extended: a crowd makes one per call.
 */
export function ranEntry(record: CallRecord, result: CallResult, reason?: string): CallHistoryEntry {
  const { callId, name, round, outcome, durationMs, attempts } = record;
  const { args, startedAt } = result;
  const endedAt = startedAt === undefined ? undefined : startedAt + durationMs;
  if (outcome === 'result_rejected') return { callId, name, round, outcome, durationMs, attempts, args, startedAt, endedAt, reason };
  if (result.status === 'completed') return { callId, name, round, outcome, durationMs, attempts, args, startedAt, endedAt, output: result.output };
  return { callId, name, round, outcome, durationMs, attempts, args, startedAt, endedAt, error: result.error };
}
