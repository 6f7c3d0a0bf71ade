import type { Envelope } from '../bus/events.js';
import type { ModelResponse } from '../llm/types.js';
import type { RecordedAttempt } from '../tools/dispatch-options.js';
import { answerOf, failureOf, outcomeOf, pending, type Pending } from './replay-events.js';

/** A call attempt that never ended: what a resume hands the dispatcher for it. */
export const INTERRUPTED: RecordedAttempt = Object.freeze({ kind: 'interrupted' });

/** Thrown to a model call the log asked but never answered: the caller asks the model itself. */
export class LiveAgain extends Error {
  constructor(agent: string) {
    super(`the log holds no answer to ${agent}'s model call: asking the model`);
    this.name = 'LiveAgain';
  }
}

/**
 * What a run waits for from its log and cannot make itself: model replies and call outcomes (and
 * the interruptions an earlier resume recorded). Each is handed over when the driver reaches its
 * event in the log, or let go, all at once, when the run goes on live.
 */
export class ReplayWaits {
  /** Agents whose model call the log holds, and is not answered yet: agent → its next answer. */
  private readonly replies = new Map<string, Pending<ModelResponse>>();
  /** Calls an earlier resume found interrupted, waiting for the log to say so: callId → the outcome. */
  private readonly interruptions = new Map<string, { waiting: Pending<RecordedAttempt>; outcome: RecordedAttempt }>();
  /** Calls whose outcome the log holds, waiting for their turn: `callId#attempt` → the outcome. */
  private readonly outcomes = new Map<string, Pending<RecordedAttempt>>();
  /** The run went on live: nothing the log holds is left to wait for. */
  private released = false;

  /** Whether `agent`'s model call waits for its answer from the log. */
  awaitsReply(agent: string): boolean {
    return this.replies.has(agent);
  }

  reply(agent: string): Promise<ModelResponse> {
    if (this.released) return Promise.reject(new LiveAgain(agent));
    const waiting = pending<ModelResponse>();
    this.replies.set(agent, waiting);
    return waiting.promise;
  }

  /** Waits for the log's `tool.interrupted` of `callId`, then hands over `outcome`. */
  interruption(callId: string, outcome: RecordedAttempt): Promise<RecordedAttempt> {
    if (this.released) return Promise.resolve(outcome);
    const waiting = pending<RecordedAttempt>();
    this.interruptions.set(callId, { waiting, outcome });
    return waiting.promise;
  }

  /** Waits for the log's end of call attempt `key` (`callId#attempt`). */
  outcome(key: string): Promise<RecordedAttempt> {
    if (this.released) return Promise.resolve(INTERRUPTED);
    const waiting = pending<RecordedAttempt>();
    this.outcomes.set(key, waiting);
    return waiting.promise;
  }

  /** Hands what `next` holds (a reply, a failure, an interruption, an outcome) to whatever waits for it. */
  handOver(next: Envelope): void {
    const data = next.data as Record<string, unknown>;
    if ((next.type === 'llm.response' || next.type === 'llm.error') && next.agent !== undefined) {
      const waiting = this.replies.get(next.agent);
      if (waiting === undefined) return;
      this.replies.delete(next.agent);
      if (next.type === 'llm.response') waiting.resolve(answerOf(next));
      else waiting.reject(failureOf(next));
      return;
    }
    if (next.type === 'tool.interrupted') {
      const callId = data.callId as string;
      const interruption = this.interruptions.get(callId);
      if (interruption === undefined) return;
      this.interruptions.delete(callId);
      interruption.waiting.resolve(interruption.outcome);
      return;
    }
    if (next.type === 'tool.completed' || next.type === 'tool.failed') {
      const key = `${data.callId as string}#${data.attempt as number}`;
      const waiting = this.outcomes.get(key);
      if (waiting === undefined) return;
      this.outcomes.delete(key);
      waiting.resolve(outcomeOf(next));
    }
  }

  /**
   * The log is used up: model calls ask the model, calls still waiting for an end count as
   * interrupted, and recorded interruptions hold; so for anything that asks to wait from now on.
   */
  release(): void {
    this.released = true;
    for (const [agent, waiting] of this.replies) waiting.reject(new LiveAgain(agent));
    this.replies.clear();
    for (const waiting of this.outcomes.values()) waiting.resolve(INTERRUPTED);
    this.outcomes.clear();
    for (const { waiting, outcome } of this.interruptions.values()) waiting.resolve(outcome);
    this.interruptions.clear();
  }
}
