import { SpanKind, type Attributes } from '@opentelemetry/api';
import type { Envelope } from '../bus/events.js';
import { canRecordUnder, endSpan, interrupted, silentSpan, startSpan, type SpanOutcome } from './open-span.js';
import { runOf } from './run-start.js';
import { GEN_AI, OPERATION, TROUPE } from './semconv.js';
import { looseToolKey, type RunSpan, type ToolSpan, type Tracing } from './tracing.js';

/**
 * Starts an `execute_tool {tool}` span on `tool.started`, one per attempt. Its parent is the tool
 * call named as the event's cause when there is one (a skill's step), else the agent's run.
 */
export function startTool(tracing: Tracing, event: Envelope<'tool.started'>, atMs: number): void {
  const { callId, name, attempt, args } = event.data;
  const run = runOf(tracing, event);
  // A new attempt whose previous one never ended: close that one first.
  const previous = toolOf(tracing, run, event);
  if (previous !== undefined) endTool(tracing, previous, atMs, interrupted('another attempt started'));
  const step = event.cause === undefined ? undefined : tracing.toolsByStart.get(event.cause);
  const parent = step ?? run;
  let span = silentSpan();
  if (canRecordUnder(parent)) {
    const attributes: Attributes = {
      [GEN_AI.operation]: OPERATION.tool,
      [GEN_AI.toolName]: name,
      [GEN_AI.toolCallId]: callId,
      [GEN_AI.toolType]: 'function',
      [TROUPE.toolAttempt]: attempt,
    };
    if (tracing.content !== undefined) attributes[GEN_AI.toolArguments] = tracing.content.json(args);
    span = startSpan(tracing.tracer, `${OPERATION.tool} ${name}`, SpanKind.INTERNAL, attributes, atMs, parent);
  }
  const looseKey = run === undefined ? looseToolKey(event.scene, event.agent, callId) : undefined;
  const tool: ToolSpan = { span, startMs: atMs, parentContext: undefined, callId, startId: event.id, run, looseKey };
  if (run !== undefined) (run.tools ??= []).push(tool);
  else tracing.looseTools.set(looseKey!, tool);
  tracing.toolsByStart.set(event.id, tool);
}

/** Ends the attempt on `tool.completed` (with its result when content is captured) or `tool.failed` (`error.type` = the failure's kind). */
export function toolSettled(tracing: Tracing, event: Envelope<'tool.completed' | 'tool.failed'>, atMs: number): void {
  const tool = toolOf(tracing, runOf(tracing, event), event);
  if (tool === undefined) return;
  if (event.type === 'tool.failed') {
    const { error } = (event as Envelope<'tool.failed'>).data;
    endTool(tracing, tool, atMs, { ok: false, errorType: error.kind, message: error.message });
    return;
  }
  if (tracing.content !== undefined && tool.span.isRecording()) {
    tool.span.setAttribute(GEN_AI.toolResult, tracing.content.json((event as Envelope<'tool.completed'>).data.output));
  }
  endTool(tracing, tool, atMs, { ok: true });
}

/** Ends a tool attempt and forgets it. */
export function endTool(tracing: Tracing, tool: ToolSpan, atMs: number, outcome: SpanOutcome): void {
  const tools = tool.run?.tools;
  if (tools !== undefined) {
    const index = tools.indexOf(tool);
    if (index >= 0) tools.splice(index, 1);
  } else if (tool.looseKey !== undefined) {
    tracing.looseTools.delete(tool.looseKey);
  }
  tracing.toolsByStart.delete(tool.startId);
  endSpan(tool, atMs, outcome);
}

/** The attempt in flight of the event's call: in its run, or among those outside any run. */
function toolOf(tracing: Tracing, run: RunSpan | undefined, event: Envelope<'tool.started' | 'tool.completed' | 'tool.failed'>): ToolSpan | undefined {
  const { callId } = event.data;
  if (run === undefined) return tracing.looseTools.get(looseToolKey(event.scene, event.agent, callId));
  for (const tool of run.tools ?? []) if (tool.callId === callId) return tool;
  return undefined;
}
