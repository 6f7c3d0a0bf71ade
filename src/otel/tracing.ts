import type { Attributes, Tracer } from '@opentelemetry/api';
import type { ContentCapture } from './content-capture.js';
import type { GenAiMetrics } from './gen-ai-metrics.js';
import type { OpenSpan } from './open-span.js';

/** An agent's run in progress: its `invoke_agent` span, and the model call and tools open in it. */
export type RunSpan = OpenSpan & {
  /** The model call in flight, if any (one at a time per run). */
  chat: ChatSpan | undefined;
  /**
   * Tool call attempts started and not yet ended; made on the run's first call. A list, not a
   * map: a run has a few calls in flight at most, and a scan of a short list is cheaper than a map.
   */
  tools: ToolSpan[] | undefined;
  /** Set once the first `llm.request` has named the provider and model on the run's span. */
  described: boolean;
  /** The `error.type` of the run's last model call, when that call failed. */
  modelError: string | undefined;
};

/** A model call in flight: its `chat` span, its metric attributes, and its last failed attempt. */
export type ChatSpan = OpenSpan & {
  metricAttributes: Attributes;
  /** The last `llm.error` of the call; a retry may still follow it. */
  failure: { errorType: string; message: string; atMs: number; attempt: number } | undefined;
};

/** A tool call attempt in flight: its `execute_tool` span. */
export type ToolSpan = OpenSpan & {
  callId: string;
  /** The id of its `tool.started`: nested steps and a skill's child agent name it as their cause. */
  startId: string;
  /** The run it belongs to; without one (a dispatch outside any run), its key in `looseTools`. */
  run: RunSpan | undefined;
  looseKey: string | undefined;
};

/**
 * A scene in progress: its `invoke_workflow` span (absent when the scene started before the bus
 * was instrumented) and its current tick's span.
 */
export type SceneSpans = { workflow: OpenSpan | undefined; tick: OpenSpan | undefined };

/** What every handler works on: where spans go, and the spans open so far. */
export type Tracing = {
  tracer: Tracer;
  metrics: GenAiMetrics;
  /** Set when content is captured. */
  content: ContentCapture | undefined;
  /**
   * Runs by scene (`''` outside scenes), then by agent: agent names are unique in a scene, not
   * across scenes on one bus. Two lookups cost less than building a joined key per event.
   */
  runs: Map<string, Map<string, RunSpan>>;
  /** Tool attempts published outside any run, by `scene, agent, callId` joined. */
  looseTools: Map<string, ToolSpan>;
  /** Every tool attempt in flight by the id of its `tool.started`. */
  toolsByStart: Map<string, ToolSpan>;
  /** Scenes by name. */
  scenes: Map<string, SceneSpans>;
  /** The metric attributes of each provider and model, made once (the same for every call). */
  callAttributes: Map<string, Map<string, Attributes>>;
};

/** The run in progress of `agent` in `scene`, if any. */
export function getRun(tracing: Tracing, scene: string | undefined, agent: string): RunSpan | undefined {
  return tracing.runs.get(scene ?? '')?.get(agent);
}

/** Records `run` as the run in progress of `agent` in `scene`. */
export function setRun(tracing: Tracing, scene: string | undefined, agent: string, run: RunSpan): void {
  let agents = tracing.runs.get(scene ?? '');
  if (agents === undefined) tracing.runs.set(scene ?? '', (agents = new Map()));
  agents.set(agent, run);
}

/** Forgets the run in progress of `agent` in `scene`. */
export function deleteRun(tracing: Tracing, scene: string | undefined, agent: string): void {
  tracing.runs.get(scene ?? '')?.delete(agent);
}

/** The key of a tool attempt outside any run: call ids are unique per agent. */
export function looseToolKey(scene: string | undefined, agent: string | undefined, callId: string): string {
  return `${scene ?? ''}\u0000${agent ?? ''}\u0000${callId}`;
}
