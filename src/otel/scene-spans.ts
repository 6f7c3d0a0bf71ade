import { SpanKind } from '@opentelemetry/api';
import type { Envelope } from '../bus/events.js';
import { canRecordUnder, endSpan, interrupted, openSpan, silentSpan, startSpan } from './open-span.js';
import { GEN_AI, OPERATION, TROUPE } from './semconv.js';
import type { SceneSpans, Tracing } from './tracing.js';

/** Starts an `invoke_workflow {scene}` span on `scene.started`: a scene coordinates several agents. */
export function sceneStarted(tracing: Tracing, event: Envelope<'scene.started'>, atMs: number): void {
  const name = event.scene;
  if (name === undefined) return;
  // A second start of a same-named scene on this bus: the first one's spans end here.
  endScene(tracing, name, atMs, undefined, 'the scene started again');
  const { seed, agents } = event.data;
  const attributes = { [GEN_AI.operation]: OPERATION.workflow, [GEN_AI.workflowName]: name, [TROUPE.scene]: name, [TROUPE.seed]: seed, 'troupe.scene.agents': agents.length };
  const workflow = openSpan(startSpan(tracing.tracer, `${OPERATION.workflow} ${name}`, SpanKind.INTERNAL, attributes, atMs, undefined), atMs);
  tracing.scenes.set(name, { workflow, tick: undefined });
}

/**
 * Ends the scene's previous tick span and starts `tick {scene}` on `scene.tick`: a tick lasts
 * until the next one or the stop, and the turns taken in it are its children.
 */
export function sceneTicked(tracing: Tracing, event: Envelope<'scene.tick'>, atMs: number): void {
  const name = event.scene;
  if (name === undefined) return;
  let scene = tracing.scenes.get(name);
  // A scene that started before the bus was instrumented: its ticks are roots.
  if (scene === undefined) tracing.scenes.set(name, (scene = { workflow: undefined, tick: undefined }));
  if (scene.tick !== undefined) endSpan(scene.tick, atMs, { ok: true });
  if (!canRecordUnder(scene.workflow)) {
    scene.tick = openSpan(silentSpan(), atMs);
    return;
  }
  const attributes = { [TROUPE.scene]: name, [TROUPE.tick]: event.data.tick };
  scene.tick = openSpan(startSpan(tracing.tracer, `tick ${name}`, SpanKind.INTERNAL, attributes, atMs, scene.workflow), atMs);
}

/** Ends the scene's tick and scene spans on `scene.stopped`, with its stop reason and last tick. */
export function sceneStopped(tracing: Tracing, event: Envelope<'scene.stopped'>, atMs: number): void {
  if (event.scene !== undefined) endScene(tracing, event.scene, atMs, event.data, '');
}

/**
 * Ends and forgets a scene's spans: stopped (`stop`, its reason and last tick, goes on the scene's
 * span), or, without `stop`, interrupted because `why`.
 */
export function endScene(tracing: Tracing, name: string, atMs: number, stop: { reason: string; tick: number } | undefined, why: string): void {
  const scene: SceneSpans | undefined = tracing.scenes.get(name);
  if (scene === undefined) return;
  tracing.scenes.delete(name);
  const outcome = stop === undefined ? interrupted(why) : ({ ok: true } as const);
  if (scene.tick !== undefined) endSpan(scene.tick, atMs, outcome);
  if (scene.workflow === undefined) return;
  if (stop !== undefined && scene.workflow.span.isRecording()) scene.workflow.span.setAttributes({ [TROUPE.stopReason]: stop.reason, [TROUPE.tick]: stop.tick });
  endSpan(scene.workflow, atMs, outcome);
}
