import { context, INVALID_SPAN_CONTEXT, SpanStatusCode, trace, type Attributes, type Context, type HrTime, type Span, type SpanKind, type Tracer } from '@opentelemetry/api';
import { GEN_AI, INTERRUPTED } from './semconv.js';

/** A span troupe started and has not ended yet, with the time it started (epoch ms). */
export type OpenSpan = {
  span: Span;
  startMs: number;
  /** The context that makes `span` the parent: made once, when its first child starts. */
  parentContext: Context | undefined;
};

/** How a span ended: fine, or failed with an error class and message. */
export type SpanOutcome = { ok: true } | { ok: false; errorType: string; message: string };

// Stands in for the children of a span that records nothing (no SDK registered, or sampled out):
// asking the tracer for each would only make more non-recording spans.
const SILENT: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** True when a span made under `parent` could record anything: it has no parent, or a recording one. */
export function canRecordUnder(parent: OpenSpan | undefined): boolean {
  return parent === undefined || parent.span.isRecording();
}

/**
 * Starts a span at `startMs` under `parent` (or under whatever context is active: an app that calls
 * `agent.run` inside its own span gets troupe's spans beneath it, given an async context manager).
 * Bus events do not carry an async context, so the parent is always passed explicitly. Callers
 * check `canRecordUnder(parent)` first, and take `silentSpan()` instead when it is false.
 */
export function startSpan(tracer: Tracer, name: string, kind: SpanKind, attributes: Attributes, startMs: number, parent: OpenSpan | undefined): Span {
  const within = parent === undefined ? context.active() : contextOf(parent);
  return tracer.startSpan(name, { kind, attributes, startTime: hrTimeOf(startMs) }, within);
}

/** The span that records nothing, for what happens under a span that records nothing. */
export function silentSpan(): Span {
  return SILENT;
}

/** An open span's record: the span, the time it started, no context made yet. */
export function openSpan(span: Span, startMs: number): OpenSpan {
  return { span, startMs, parentContext: undefined };
}

/** The context with `open` as its active span, made on first use and kept. */
export function contextOf(open: OpenSpan): Context {
  return (open.parentContext ??= trace.setSpan(context.active(), open.span));
}

/** Ends `open` at `endMs` with `outcome`; returns its duration in seconds (never negative). */
export function endSpan(open: OpenSpan, endMs: number, outcome: SpanOutcome): number {
  // A clock that went backwards (a host-set bus clock) must not make a negative span.
  const end = Math.max(endMs, open.startMs);
  const { span } = open;
  if (span.isRecording()) {
    if (!outcome.ok) {
      span.setAttribute(GEN_AI.errorType, outcome.errorType);
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
    }
    span.end(hrTimeOf(end));
  }
  return (end - open.startMs) / 1_000;
}

/** The outcome of a span ended by something other than its own closing event. */
export function interrupted(why: string): SpanOutcome {
  return { ok: false, errorType: INTERRUPTED, message: `interrupted: ${why}` };
}

/**
 * Epoch milliseconds as OpenTelemetry's `[seconds, nanoseconds]`. A plain number would be read as
 * `performance.now()` when small (below half the process's time origin), which a stepped scene's
 * clock (0, 1000, 2000…) is: the pair always means time since the epoch.
 */
export function hrTimeOf(epochMs: number): HrTime {
  let seconds = Math.floor(epochMs / 1_000);
  let nanos = Math.round((epochMs - seconds * 1_000) * 1_000_000);
  if (nanos >= 1_000_000_000) {
    seconds += 1;
    nanos -= 1_000_000_000;
  }
  return [seconds, nanos];
}
