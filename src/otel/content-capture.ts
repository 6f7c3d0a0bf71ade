import type { FinishReason, NativeToolCall } from '../bus/event-data.js';
import { safeJson } from '../bus/safe-json.js';
import { createRedactor } from '../record/redact.js';

/** How captured content is made safe to export: secrets redacted, each text or value cut to size. */
export type ContentCapture = {
  /** A text, redacted and cut to `maxChars` (a marker says how much was cut). */
  text(text: string): string;
  /** Any value as JSON text, redacted and cut (never throws: cycles, BigInt… become placeholders). */
  json(value: unknown): string;
};

/** The capture for `instrumentBus({ captureContent: true })`. */
export function contentCapture(maxChars: number, secrets: readonly (string | RegExp)[]): ContentCapture {
  const redactor = createRedactor({ secrets });
  return {
    text: (text) => cut(redactor.text(text), maxChars),
    json: (value) => safeJson(value, { redactor, maxChars }).text,
  };
}

/** `text` cut to `maxChars` characters with the marker `safeJson` uses; never splits a surrogate pair. */
function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // A high surrogate at the cut would leave a lone half: exporters reject it as invalid UTF-8.
  const end = /[\uD800-\uDBFF]/.test(text[maxChars - 1]!) ? maxChars - 1 : maxChars;
  return `${text.slice(0, end)}…[truncated at ${maxChars} characters]`;
}

// The conventions' output-message finish reasons; troupe's others (`stop_sequence`, `refusal`)
// are allowed as free strings, but a stop sequence is a plain stop to them.
const FINISH_REASONS: Partial<Record<FinishReason, string>> = { tool_calls: 'tool_call', stop_sequence: 'stop' };

/**
 * `gen_ai.output.messages` for one reply: one assistant message with its text and native calls,
 * following the conventions' output-messages schema, as JSON text (spans take no structured values).
 * Each text and each call's arguments are cut on their own, so the JSON stays whole.
 */
export function outputMessages(capture: ContentCapture, text: string, finishReason: FinishReason | string, toolCalls?: readonly NativeToolCall[]): string {
  const parts: Record<string, unknown>[] = [];
  if (text !== '') parts.push({ type: 'text', content: capture.text(text) });
  for (const call of toolCalls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: callArguments(capture, call.arguments) });
  const reason = FINISH_REASONS[finishReason as FinishReason] ?? finishReason;
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: reason }]);
}

/** A native call's raw argument text as the object it holds when it parses, else as (cut) text. */
function callArguments(capture: ContentCapture, raw: string): unknown {
  try {
    const parsed: unknown = JSON.parse(raw);
    return JSON.parse(capture.json(parsed)) as unknown;
  } catch {
    // Broken JSON from the model, or a value cut short: kept as text.
    return capture.text(raw);
  }
}
