import type { RunReason } from '../../bus/event-data.js';
import type { TroupeEvents } from '../../bus/events.js';
import type { RunResult } from '../agent-options.js';
import type { RunState } from './run-state.js';

/** What a finished run resolves with, and the data of its `agent.finished`. */
export function runResult(run: RunState, reason: RunReason, now: number): { result: RunResult; data: TroupeEvents['agent.finished'] } {
  const stats = {
    rounds: run.round,
    calls: run.dispatched,
    corrections: run.corrections,
    repairs: run.repairs,
    durationMs: now - run.startedAt,
    usage: run.usage,
    history: run.history,
  };
  const result: RunResult = {
    reason,
    text: run.text,
    rounds: run.round,
    calls: run.calls ?? [],
    modelCalls: run.modelCalls ?? [],
    messages: run.messages,
    contextLength: run.contextLength,
    usage: run.usage,
    stats,
  };
  const data: TroupeEvents['agent.finished'] = { reason, text: run.text, rounds: run.round, stats };
  if (run.output !== undefined) result.output = run.output;
  if (run.error !== undefined) result.error = data.error = run.error;
  if (run.lastIssues !== undefined) result.issues = data.issues = run.lastIssues;
  if (run.observation !== undefined) result.observation = run.observation;
  return { result, data };
}
