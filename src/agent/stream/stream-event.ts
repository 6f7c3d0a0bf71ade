import type { Envelope } from '../../bus/events.js';
import type { Args, RejectionCode, ToolFailure } from '../../bus/event-data.js';
import type { RunResult } from '../agent-options.js';

/**
 * One event of `agent.stream(input)`, for an app: what the model writes, the calls it makes and
 * what becomes of them, the approvals they wait for, and the finish. Each is derived from one bus
 * event of that run (the bus keeps the full detail); `type` tells them apart.
 */
export type AgentStreamEvent =
  /** The run began (`run.started`): `run` is its number, as in call ids `<agent>/<run>.<round>.<n>`. */
  | { type: 'start'; agent: string; run: number }
  /**
   * Visible text as the model writes it (`llm.delta`); with a provider that does not stream, the
   * round's whole text at once (`agent.said`). The deltas of the last round that wrote text add up
   * to `result.text`.
   */
  | { type: 'text-delta'; round: number; text: string }
  /** Reasoning ("thinking") text, from providers that stream it (`llm.reasoning`); never part of the answer. */
  | { type: 'reasoning-delta'; round: number; text: string }
  /** A streamed attempt failed part-way and is retried (`llm.superseded`): drop this round's deltas so far. */
  | { type: 'text-discarded'; round: number; reason: string }
  /** The model asked for a call, and it passed validation (`action.parsed`, one per call). */
  | { type: 'call'; round: number; callId: string; name: string; args: Args }
  /** A call refused before running (`tool.rejected`): unknown tool, bad arguments, or `denied` by the host. */
  | { type: 'call-rejected'; callId: string; name: string; code: RejectionCode; message: string }
  /** The call waits for `agent.approve(callId)` or `agent.deny(callId)` (`tool.approval.requested`). */
  | { type: 'approval-requested'; callId: string; name: string; args: Args; argsHash: string }
  /** The host decided on a call (`tool.approval.resolved`). */
  | { type: 'approval-resolved'; callId: string; name: string; approved: boolean; reason?: string }
  /** A running call reported its progress (`tool.progress`). */
  | { type: 'progress'; callId: string; name: string; progress: number; total?: number; message?: string }
  /** A call completed (`tool.completed`): `output` is what the tool returned. */
  | { type: 'result'; callId: string; name: string; output: unknown; durationMs: number }
  /** An attempt of a call failed (`tool.failed`); a retried call fails once per attempt, the last is final. */
  | { type: 'call-failed'; callId: string; name: string; error: ToolFailure; attempt: number }
  /** A completed call's result waits for `agent.approveResult` or `agent.rejectResult`. */
  | { type: 'result-approval-requested'; callId: string; name: string; output: unknown; outputHash: string }
  /** The host decided on a held result (`tool.result.approval.resolved`). */
  | { type: 'result-approval-resolved'; callId: string; name: string; approved: boolean; reason?: string }
  /** The run's end, always the last event: the very result `agent.run` resolves with. */
  | { type: 'finish'; result: RunResult };

/**
 * Turns a run's bus events into stream events, keeping what it needs across them: the round
 * under way, and whether its text was streamed (else `agent.said` stands for the deltas).
 */
export class StreamEventMapper {
  private round = 0;
  private streamed = false;

  /** The stream events one bus event gives (none for most: the bus has more detail than an app wants). */
  map(event: Envelope, out: (event: AgentStreamEvent) => void): void {
    switch (event.type) {
      case 'run.started':
        return out({ type: 'start', agent: event.agent ?? '', run: event.data.number });
      case 'llm.request':
        this.round = event.data.round;
        this.streamed = false;
        return;
      case 'llm.delta':
        this.streamed = true;
        return out({ type: 'text-delta', round: event.data.round, text: event.data.text });
      case 'llm.reasoning':
        return out({ type: 'reasoning-delta', round: event.data.round, text: event.data.text });
      case 'llm.superseded':
        this.streamed = false;
        return out({ type: 'text-discarded', round: event.data.round, reason: event.data.reason });
      case 'agent.said':
        if (!this.streamed) out({ type: 'text-delta', round: this.round, text: event.data.text });
        return;
      case 'action.parsed':
        for (const call of event.data.calls) out({ type: 'call', round: this.round, callId: call.callId, name: call.name, args: call.args });
        return;
      case 'tool.rejected': {
        const { callId, name, code, message } = event.data;
        return out({ type: 'call-rejected', callId, name, code, message });
      }
      case 'tool.approval.requested': {
        const { callId, name, args, argsHash } = event.data;
        return out({ type: 'approval-requested', callId, name, args, argsHash });
      }
      case 'tool.approval.resolved':
        return out({ type: 'approval-resolved', ...event.data });
      case 'tool.progress':
        return out({ type: 'progress', ...event.data });
      case 'tool.completed': {
        const { callId, name, output, durationMs } = event.data;
        return out({ type: 'result', callId, name, output, durationMs });
      }
      case 'tool.failed': {
        const { callId, name, error, attempt } = event.data;
        return out({ type: 'call-failed', callId, name, error, attempt });
      }
      case 'tool.result.approval.requested': {
        const { callId, name, output, outputHash } = event.data;
        return out({ type: 'result-approval-requested', callId, name, output, outputHash });
      }
      case 'tool.result.approval.resolved':
        return out({ type: 'result-approval-resolved', ...event.data });
      default:
        return;
    }
  }
}
