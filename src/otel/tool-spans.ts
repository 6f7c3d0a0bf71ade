import { SpanKind, type Attributes } from '@opentelemetry/api';
import type { Envelope } from '../bus/events.js';
import { endSpan, interrupted, startSpan, type OpenSpan, type SpanOutcome } from './open-span.js';
import { runOf } from './run-start.js';
import { GEN_AI, OPERATION, TROUPE } from './semconv.js';
import { toolKey, type ToolSpan, type Tracing } from './tracing.js';

/**
 * Starts an `execute_tool {tool}` span on `tool.started`, one per attempt. Its parent is the tool
 * call named as the event's cause when there is one (a skill's step), else the agent's run.
 */
export function startTool(tracing: Tracing, event: Envelope<'tool.started'>, atMs: number): void {
  const { callId, name, attempt, args } = event.data;
  const key = toolKey(event.scene, event.agent, callId);
  // A new attempt whose previous one never ended: close that one first.
  const previous = tracing.tools.get(key);
  if (previous !== undefined) endTool(tracing, previous, atMs, interrupted('another attempt started'));
  const step = event.cause === undefined ? undefined : tracing.toolsByStart.get(event.cause);
  const run = runOf(tracing, event);
  const parent: OpenSpan | undefined = step ?? run;
  const attributes: Attributes = {
    [GEN_AI.operation]: OPERATION.tool,
    [GEN_AI.toolName]: name,
    [GEN_AI.toolCallId]: callId,
    [GEN_AI.toolType]: 'function',
    [TROUPE.toolAttempt]: attempt,
  };
  if (tracing.content !== undefined) attributes[GEN_AI.toolArguments] = tracing.content.json(args);
  const span = startSpan(tracing.tracer, `${OPERATION.tool} ${name}`, SpanKind.INTERNAL, attributes, atMs, parent);
  const tool: ToolSpan = { ...span, key, startId: event.id, run };
  tracing.tools.set(key, tool);
  tracing.toolsByStart.set(event.id, tool);
  if (run !== undefined) (run.tools ??= new Set()).add(tool);
}

/** Ends the attempt on `tool.completed` (with its result when content is captured) or `tool.failed` (`error.type` = the failure's kind). */
export function toolSettled(tracing: Tracing, event: Envelope<'tool.completed' | 'tool.failed'>, atMs: number): void {
  const tool = tracing.tools.get(toolKey(event.scene, event.agent, event.data.callId));
  if (tool === undefined) return;
  if (event.type === 'tool.failed') {
    const { error } = (event as Envelope<'tool.failed'>).data;
    endTool(tracing, tool, atMs, { ok: false, errorType: error.kind, message: error.message });
    return;
  }
  if (tracing.content !== undefined) tool.span.setAttribute(GEN_AI.toolResult, tracing.content.json((event as Envelope<'tool.completed'>).data.output));
  endTool(tracing, tool, atMs, { ok: true });
}

/** Ends a tool attempt and forgets it. */
export function endTool(tracing: Tracing, tool: ToolSpan, atMs: number, outcome: SpanOutcome): void {
  tracing.tools.delete(tool.key);
  tracing.toolsByStart.delete(tool.startId);
  tool.run?.tools?.delete(tool);
  endSpan(tool, atMs, outcome);
}
