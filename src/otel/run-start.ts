import { SpanKind, type Attributes } from '@opentelemetry/api';
import type { Envelope } from '../bus/events.js';
import { canRecordUnder, silentSpan, startSpan, type OpenSpan } from './open-span.js';
import { GEN_AI, OPERATION, TROUPE } from './semconv.js';
import { getRun, setRun, type RunSpan, type Tracing } from './tracing.js';

/** The run in progress of the event's agent, if any. */
export function runOf(tracing: Tracing, event: Envelope): RunSpan | undefined {
  return event.agent === undefined ? undefined : getRun(tracing, event.scene, event.agent);
}

/**
 * The event's agent's run, started at `atMs` if none is open: a run's first event is usually
 * `agent.triggered` (a scene turn) or `agent.state` leaving `idle`/`done`/`failed`, but a bus
 * instrumented mid-run, or a run resumed from a snapshot, starts with whatever comes.
 */
export function ensureRun(tracing: Tracing, event: Envelope & { agent: string }, atMs: number): RunSpan {
  const found = getRun(tracing, event.scene, event.agent);
  if (found !== undefined) return found;
  const parent = runParent(tracing, event);
  let span = silentSpan();
  if (canRecordUnder(parent)) {
    const attributes: Attributes = { [GEN_AI.operation]: OPERATION.agent, [GEN_AI.agentName]: event.agent };
    if (event.scene !== undefined) attributes[TROUPE.scene] = event.scene;
    if (event.type === 'agent.triggered') attributes[TROUPE.trigger] = event.data.reason;
    span = startSpan(tracing.tracer, `${OPERATION.agent} ${event.agent}`, SpanKind.INTERNAL, attributes, atMs, parent);
  }
  const run: RunSpan = { span, startMs: atMs, parentContext: undefined, chat: undefined, tools: undefined, described: false, modelError: undefined };
  setRun(tracing, event.scene, event.agent, run);
  return run;
}

/**
 * Where a run's span belongs: under the tool call that started it (a skill's child agent: its
 * first events name the skill call's `tool.started` as their cause), else under its scene's
 * current tick, else under the scene, else at the root.
 */
function runParent(tracing: Tracing, event: Envelope): OpenSpan | undefined {
  // A scene turn is never a child agent, whatever woke it.
  if (event.type !== 'agent.triggered' && event.cause !== undefined) {
    const tool = tracing.toolsByStart.get(event.cause);
    if (tool !== undefined) return tool;
  }
  if (event.scene === undefined) return undefined;
  const scene = tracing.scenes.get(event.scene);
  return scene?.tick ?? scene?.workflow;
}
