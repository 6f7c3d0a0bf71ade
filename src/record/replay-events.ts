import type { Agent } from '../agent/agent-options.js';
import type { Envelope } from '../bus/events.js';
import { ProviderError } from '../llm/provider-error.js';
import type { ModelResponse } from '../llm/types.js';
import type { RecordedAttempt } from '../tools/dispatch-options.js';

/**
 * What the replay driver reads out of logged events: a model's reply or failure, a call's
 * outcome, which approval or agent an event belongs to, and the hint a divergence gets.
 */

/** `resume` takes tools' outcomes from the log (a recorded call never runs again); `replay` runs them again and compares. */
export type ReplayMode = 'resume' | 'replay';

/** What the driver needs of what it drives: the agents, and how to apply a recorded change of the world or of private state. */
export type ReplayTarget = {
  agent(name: string): Agent | undefined;
  /** Publishes an event as the log has it (on the bus being replayed). */
  publish(event: Envelope): void;
  applyWorld(path: string, value: unknown, writer: { agent?: string; cause?: string }): void;
  applyPrivate(agent: string, path: string, value: unknown, cause: string | undefined): void;
  /** Publishes again every approval request still waiting (a resume going on live); returns how many. */
  requestApprovalsAgain(): number;
};

/** Where a run stopped following its log: the first event that differs. */
export type Divergence = {
  /** The event's position among the compared events, from 1. */
  index: number;
  /** Its line in the log (0 when the log had ended: the run made an event the log does not hold). */
  line: number;
  expected?: { type: string; agent?: string };
  actual?: { type: string; agent?: string };
  /** The first field that differs, when both events are of the same type. */
  field?: string;
  hint: string;
};

/** A promise with its settling functions, for what waits until the log reaches it. */
export type Pending<T> = { resolve: (value: T) => void; reject: (error: unknown) => void; promise: Promise<T> };

/** Which approval an approval event is about (`call:<callId>`, `result:<callId>`), or undefined for any other event. */
export function approvalKey(event: Envelope): string | undefined {
  switch (event.type) {
    case 'tool.approval.requested':
    case 'tool.approval.resolved':
      return `call:${(event.data as { callId: string }).callId}`;
    case 'tool.result.approval.requested':
    case 'tool.result.approval.resolved':
      return `result:${(event.data as { callId: string }).callId}`;
    default:
      return undefined;
  }
}

/** The sequence an event belongs to: its agent's, or the scene's and the host's. */
export function streamOf(event: Envelope): string {
  return event.agent ?? '';
}

export function answerOf(event: Envelope): ModelResponse {
  const { text, toolCalls, finishReason, stopSequence, usage, passed } = event.data as Record<string, unknown>;
  const response: ModelResponse = { text: text as string, finishReason: finishReason as ModelResponse['finishReason'] };
  if (toolCalls !== undefined) response.toolCalls = toolCalls as ModelResponse['toolCalls'];
  if (stopSequence !== undefined) response.stopSequence = stopSequence as string;
  if (usage !== undefined) response.usage = usage as ModelResponse['usage'];
  if (passed === true) response.passed = true;
  return response;
}

export function failureOf(event: Envelope): ProviderError {
  const { kind, message, retryable, retryAfterMs } = event.data as { kind: ProviderError['kind']; message: string; retryable: boolean; retryAfterMs?: number };
  return new ProviderError(kind, message, { retryable, ...(retryAfterMs !== undefined && { retryAfterMs }) });
}

export function outcomeOf(event: Envelope): RecordedAttempt {
  const data = event.data as { output?: unknown; error?: RecordedAttempt & { kind: string } };
  return event.type === 'tool.completed' ? { kind: 'completed', output: data.output } : { kind: 'failed', error: data.error as never };
}

export function pending<T>(): Pending<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  // Nobody may be waiting when the log ends; an unhandled rejection must not crash the process.
  promise.catch(() => undefined);
  return { resolve, reject, promise };
}

export function hintFor(expected: Envelope | undefined, actual: Envelope | undefined, field: string | undefined): string {
  if (expected === undefined) return 'the run made an event the log does not hold: the scene did more than it did when the log was written';
  if (actual === undefined) return 'the log holds an event the run cannot make: the scene or its tools changed since the log was written';
  if (expected.type !== actual.type) return 'the run took another path here: the scene, its tools or its brains changed, or depend on something outside the log (time, files, randomness not from the seed)';
  return `the same event with other data${field === undefined ? '' : ` at ${field}`}: a tool or brain gave another answer than when the log was written`;
}
