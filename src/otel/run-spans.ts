import type { Attributes } from '@opentelemetry/api';
import type { Envelope } from '../bus/events.js';
import { endChat } from './chat-spans.js';
import { outputMessages } from './content-capture.js';
import { endSpan, hrTimeOf, interrupted } from './open-span.js';
import { ensureRun, runOf } from './run-start.js';
import { GEN_AI, OTHER_ERROR, TROUPE } from './semconv.js';
import { endTool } from './tool-spans.js';
import { deleteRun, type RunSpan, type Tracing } from './tracing.js';

/**
 * Ends the run on `agent.finished`: its reason, rounds, calls and usage on the span, an error
 * status when it ended in `error`. A model call or tool still open is ended as interrupted.
 */
export function finishRun(tracing: Tracing, event: Envelope<'agent.finished'>, atMs: number): void {
  if (event.agent === undefined) return;
  // A run that finished before any other event (aborted before it started) still gets its span.
  const run = ensureRun(tracing, event as Envelope<'agent.finished'> & { agent: string }, atMs);
  deleteRun(tracing, event.scene, event.agent);
  const { reason, rounds, stats, text, error } = event.data;
  endOpenWork(tracing, run, atMs, `the run finished (${reason}) first`);
  if (!run.span.isRecording()) return;
  const attributes: Attributes = { [TROUPE.runReason]: reason, [TROUPE.rounds]: rounds, [TROUPE.calls]: stats.calls };
  if (stats.usage.inputTokens > 0 || stats.usage.outputTokens > 0) {
    attributes[GEN_AI.inputTokens] = stats.usage.inputTokens;
    attributes[GEN_AI.outputTokens] = stats.usage.outputTokens;
  }
  if (tracing.content !== undefined && text !== '') attributes[GEN_AI.outputMessages] = outputMessages(tracing.content, text, reason);
  run.span.setAttributes(attributes);
  const failed = reason === 'error';
  endSpan(run, atMs, failed ? { ok: false, errorType: run.modelError ?? OTHER_ERROR, message: error ?? 'the run failed' } : { ok: true });
}

/** Ends what is still open in a run: its model call and its tool calls. */
export function endOpenWork(tracing: Tracing, run: RunSpan, atMs: number, why: string): void {
  if (run.chat !== undefined) endChat(tracing, run, atMs, why);
  if (run.tools !== undefined) for (const tool of [...run.tools]) endTool(tracing, tool, atMs, interrupted(why));
}

/**
 * Notes on the run's span what happened without a span of its own: refused calls, malformed
 * blocks, exhausted budgets, and (when content is captured) speech and observations.
 */
export function noteOnRun(tracing: Tracing, event: Envelope, atMs: number): void {
  const run = runOf(tracing, event);
  if (run === undefined || !run.span.isRecording()) return;
  const attributes = noteAttributes(tracing, event);
  if (attributes !== undefined) run.span.addEvent(`troupe.${event.type}`, attributes, hrTimeOf(atMs));
}

function noteAttributes(tracing: Tracing, event: Envelope): Attributes | undefined {
  switch (event.type) {
    case 'tool.rejected':
      return { [GEN_AI.toolName]: event.data.name, [GEN_AI.toolCallId]: event.data.callId, 'troupe.rejection.code': event.data.code, 'troupe.rejection.category': event.data.category };
    case 'action.malformed':
      return { 'troupe.malformed.code': event.data.code };
    case 'budget.exhausted':
      return { 'troupe.budget.name': event.data.budget, 'troupe.budget.kind': event.data.kind, 'troupe.budget.limit': event.data.limit };
    case 'agent.said':
      if (tracing.content === undefined) return undefined;
      return event.data.to === undefined ? { [TROUPE.content]: tracing.content.text(event.data.text) } : { [TROUPE.content]: tracing.content.text(event.data.text), 'troupe.said.to': event.data.to };
    case 'agent.observation':
      if (tracing.content === undefined) return undefined;
      return { [TROUPE.content]: tracing.content.text(event.data.text), 'troupe.observation.ok': event.data.ok };
    default:
      return undefined;
  }
}
