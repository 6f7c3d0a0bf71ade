import type { Bus } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import { ConfigError } from '../errors.js';
import { chatFailed, chatResponded, startChat } from './chat-spans.js';
import { contentCapture } from './content-capture.js';
import { genAiMetrics } from './gen-ai-metrics.js';
import { resolveInstrumentOptions, type InstrumentBusOptions } from './instrument-options.js';
import { endSpan, interrupted } from './open-span.js';
import { ensureRun, runOf } from './run-start.js';
import { endOpenWork, finishRun, noteOnRun } from './run-spans.js';
import { endScene, sceneStarted, sceneStopped, sceneTicked } from './scene-spans.js';
import { endTool, startTool, toolSettled } from './tool-spans.js';
import type { Tracing } from './tracing.js';

/** Stops the instrumentation and ends every span still open. Calling it twice is harmless. */
export type CloseInstrumentation = () => void;

/** The instrumentation scope troupe's tracer and meter are named after. */
export const INSTRUMENTATION_SCOPE = 'troupe';

// A run is under way in any state but these: leaving one of them starts the run.
const AT_REST = new Set(['idle', 'done', 'failed']);

/**
 * Makes OpenTelemetry spans and metrics from a bus's events, following the GenAI semantic
 * conventions: `invoke_agent {agent}` per run, `chat {model}` per model call, `execute_tool {tool}`
 * per tool call attempt, `invoke_workflow {scene}` per scene and `tick {scene}` per tick, linked
 * parent to child; and the histograms `gen_ai.client.token.usage` and
 * `gen_ai.client.operation.duration`. Everything goes through `@opentelemetry/api`: until an SDK
 * is registered (or providers are given) it records nothing and costs little.
 *
 * @example
 * import { createAgent, scriptedProvider } from 'troupe';
 * import { instrumentBus } from 'troupe/otel';
 *
 * const agent = createAgent({ name: 'referee', provider: scriptedProvider(['Player 7 is Ana.']) });
 * const close = instrumentBus(agent.bus);      // the global tracer and meter providers
 * await agent.run('Who is player 7?');
 * close();                                     // ends any span still open, as interrupted
 */
export function instrumentBus(bus: Bus, options?: InstrumentBusOptions): CloseInstrumentation {
  if (bus === null || typeof bus !== 'object' || typeof bus.on !== 'function') {
    throw new ConfigError('instrumentBus(bus) needs a troupe bus: agent.bus, scene.bus or createBus()');
  }
  const resolved = resolveInstrumentOptions(options);
  const tracing: Tracing = {
    tracer: resolved.tracerProvider.getTracer(INSTRUMENTATION_SCOPE),
    metrics: genAiMetrics(resolved.meterProvider, INSTRUMENTATION_SCOPE),
    content: resolved.captureContent ? contentCapture(resolved.maxContentChars, resolved.redact) : undefined,
    runs: new Map(),
    looseTools: new Map(),
    toolsByStart: new Map(),
    scenes: new Map(),
    callAttributes: new Map(),
  };
  // The time an event's spans start or end at, and the last one seen (what `close` ends at).
  let lastMs = Number.NEGATIVE_INFINITY;
  const wall = resolved.timestamps === 'wall';
  const timeOf = (event: Envelope): number => (lastMs = wall ? performance.timeOrigin + performance.now() : event.at);
  const stop = bus.on('*', (event) => handle(tracing, event, timeOf));
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    stop();
    const atMs = wall || lastMs === Number.NEGATIVE_INFINITY ? performance.timeOrigin + performance.now() : lastMs;
    closeAll(tracing, atMs, 'instrumentBus was closed');
  };
}

/** Turns one event into span work; most events are not about spans and return at once. */
function handle(tracing: Tracing, event: Envelope, timeOf: (event: Envelope) => number): void {
  switch (event.type) {
    case 'agent.triggered':
      if (event.agent !== undefined) ensureRun(tracing, event as Envelope & { agent: string }, timeOf(event));
      return;
    case 'agent.state':
      if (event.agent !== undefined && !AT_REST.has(event.data.to) && runOf(tracing, event) === undefined) {
        ensureRun(tracing, event as Envelope & { agent: string }, timeOf(event));
      }
      return;
    case 'llm.request':
      return startChat(tracing, event, timeOf(event));
    case 'llm.response':
      return chatResponded(tracing, event, timeOf(event));
    case 'llm.error':
      return chatFailed(tracing, event, timeOf(event));
    case 'tool.started':
      return startTool(tracing, event, timeOf(event));
    case 'tool.completed':
    case 'tool.failed':
      return toolSettled(tracing, event, timeOf(event));
    case 'agent.finished':
      return finishRun(tracing, event, timeOf(event));
    case 'tool.rejected':
    case 'action.malformed':
    case 'budget.exhausted':
    case 'agent.said':
    case 'agent.observation':
      return noteOnRun(tracing, event, timeOf(event));
    case 'scene.started':
      return sceneStarted(tracing, event, timeOf(event));
    case 'scene.tick':
      return sceneTicked(tracing, event, timeOf(event));
    case 'scene.stopped':
      return sceneStopped(tracing, event, timeOf(event));
    default:
      return;
  }
}

/** Ends every open span at `atMs` as interrupted: tools and model calls, runs, then scenes. */
function closeAll(tracing: Tracing, atMs: number, why: string): void {
  for (const tool of [...tracing.looseTools.values()]) endTool(tracing, tool, atMs, interrupted(why));
  for (const agents of tracing.runs.values()) {
    for (const run of agents.values()) {
      endOpenWork(tracing, run, atMs, why);
      endSpan(run, atMs, interrupted(why));
    }
  }
  tracing.runs.clear();
  for (const name of [...tracing.scenes.keys()]) endScene(tracing, name, atMs, undefined, why);
}
