import { SpanKind, type Attributes } from '@opentelemetry/api';
import type { Envelope } from '../bus/events.js';
import { outputMessages } from './content-capture.js';
import { canRecordUnder, endSpan, hrTimeOf, interrupted, silentSpan, startSpan, type SpanOutcome } from './open-span.js';
import { ensureRun, runOf } from './run-start.js';
import { GEN_AI, genAiProviderName, OPERATION, TROUPE } from './semconv.js';
import type { RunSpan, Tracing } from './tracing.js';

/**
 * Starts a `chat {model}` span on `llm.request`, a child of the agent's run. The first request of
 * a run also names the provider and model on the run's span (the conventions require the provider
 * there too, and a run learns it only now).
 */
export function startChat(tracing: Tracing, event: Envelope<'llm.request'>, atMs: number): void {
  if (event.agent === undefined) return;
  const run = ensureRun(tracing, event as Envelope<'llm.request'> & { agent: string }, atMs);
  // One call at a time per run: a request while one is open means its end was never published.
  if (run.chat !== undefined) endChat(tracing, run, atMs, 'a new llm.request came first');
  const { provider, model, round } = event.data;
  const metricAttributes = callAttributes(tracing, provider, model);
  let span = silentSpan();
  if (canRecordUnder(run)) {
    if (!run.described) {
      run.described = true;
      run.span.setAttributes({ [GEN_AI.provider]: metricAttributes[GEN_AI.provider], ...(model !== undefined && { [GEN_AI.requestModel]: model }) });
    }
    const name = model === undefined ? OPERATION.chat : `${OPERATION.chat} ${model}`;
    span = startSpan(tracing.tracer, name, SpanKind.CLIENT, { ...metricAttributes, [TROUPE.round]: round }, atMs, run);
  }
  run.chat = { span, startMs: atMs, parentContext: undefined, metricAttributes, failure: undefined };
}

/** Ends the run's model call on `llm.response`: finish reason, usage, and the reply when content is captured. */
export function chatResponded(tracing: Tracing, event: Envelope<'llm.response'>, atMs: number): void {
  const run = runOf(tracing, event);
  const chat = run?.chat;
  if (run === undefined || chat === undefined) return;
  const { finishReason, usage, text, toolCalls } = event.data;
  if (chat.span.isRecording()) {
    const attributes: Attributes = { [GEN_AI.finishReasons]: [finishReason] };
    if (usage !== undefined) {
      attributes[GEN_AI.inputTokens] = usage.inputTokens;
      attributes[GEN_AI.outputTokens] = usage.outputTokens;
    }
    if (chat.failure !== undefined) attributes[TROUPE.attempts] = chat.failure.attempt + 1;
    if (tracing.content !== undefined) attributes[GEN_AI.outputMessages] = outputMessages(tracing.content, text, finishReason, toolCalls);
    chat.span.setAttributes(attributes);
  }
  run.chat = undefined;
  run.modelError = undefined;
  const seconds = endSpan(chat, atMs, { ok: true });
  tracing.metrics.recordCall(chat.metricAttributes, seconds, undefined, usage);
}

/**
 * Notes a failed attempt on `llm.error`. A retryable failure may be followed by another attempt,
 * so the span stays open (the failure is a span event); a final one ends it with `error.type` =
 * the failure's kind. When the retries run out the agent finishes next, and the span ends at its
 * last failure.
 */
export function chatFailed(tracing: Tracing, event: Envelope<'llm.error'>, atMs: number): void {
  const run = runOf(tracing, event);
  const chat = run?.chat;
  if (run === undefined || chat === undefined) return;
  const { kind, message, retryable, attempt } = event.data;
  chat.failure = { errorType: kind, message, atMs, attempt };
  if (chat.span.isRecording()) {
    chat.span.addEvent('troupe.llm.error', { [GEN_AI.errorType]: kind, 'troupe.llm.attempt': attempt, 'troupe.llm.retryable': retryable }, hrTimeOf(atMs));
    chat.span.setAttribute(TROUPE.attempts, attempt);
  }
  if (!retryable) endChat(tracing, run, atMs, 'the call failed');
}

/**
 * Ends the run's open model call without a reply: as failed, at its last failure, when one was
 * reported; else as interrupted, at `atMs`, because `why`.
 */
export function endChat(tracing: Tracing, run: RunSpan, atMs: number, why: string): void {
  const chat = run.chat;
  if (chat === undefined) return;
  run.chat = undefined;
  const { failure } = chat;
  const outcome: SpanOutcome = failure === undefined ? interrupted(why) : { ok: false, errorType: failure.errorType, message: failure.message };
  if (!outcome.ok) run.modelError = outcome.errorType;
  const seconds = endSpan(chat, failure?.atMs ?? atMs, outcome);
  tracing.metrics.recordCall(chat.metricAttributes, seconds, outcome.ok ? undefined : outcome.errorType, undefined);
}

// The key of a provider that names no model: no model name holds a NUL.
const NO_MODEL = '\u0000';

/** The metric attributes of a call to `provider` and `model`: made once per pair and shared (frozen). */
function callAttributes(tracing: Tracing, provider: string, model: string | undefined): Attributes {
  let models = tracing.callAttributes.get(provider);
  if (models === undefined) tracing.callAttributes.set(provider, (models = new Map()));
  let attributes = models.get(model ?? NO_MODEL);
  if (attributes === undefined) {
    const made: Attributes = { [GEN_AI.operation]: OPERATION.chat, [GEN_AI.provider]: genAiProviderName(provider) };
    if (model !== undefined) made[GEN_AI.requestModel] = model;
    models.set(model ?? NO_MODEL, (attributes = Object.freeze(made)));
  }
  return attributes;
}
