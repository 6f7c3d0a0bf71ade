import type { Attributes, Tracer } from '@opentelemetry/api';
import type { ContentCapture } from './content-capture.js';
import type { GenAiMetrics } from './gen-ai-metrics.js';
import type { OpenSpan } from './open-span.js';

/** An agent's run in progress: its `invoke_agent` span, and the model call and tools open in it. */
export type RunSpan = OpenSpan & {
  /** The model call in flight, if any (one at a time per run). */
  chat: ChatSpan | undefined;
  /** Tool calls started and not yet ended, made on the run's first call. */
  tools: Set<ToolSpan> | undefined;
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
  key: string;
  /** The id of its `tool.started`: nested steps and a skill's child agent name it as their cause. */
  startId: string;
  run: RunSpan | undefined;
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
  /** Runs by `runKey(scene, agent)`. */
  runs: Map<string, RunSpan>;
  /** Tool attempts by `toolKey(scene, agent, callId)`. */
  tools: Map<string, ToolSpan>;
  /** The same tool attempts by the id of their `tool.started`. */
  toolsByStart: Map<string, ToolSpan>;
  /** Scenes by name. */
  scenes: Map<string, SceneSpans>;
};

/** The key of an agent's run: agent names are unique in a scene, not across scenes on one bus. */
export function runKey(scene: string | undefined, agent: string): string {
  return scene === undefined ? agent : `${scene}\u0000${agent}`;
}

/** The key of a tool call attempt in flight: call ids are unique per agent. */
export function toolKey(scene: string | undefined, agent: string | undefined, callId: string): string {
  return `${scene ?? ''}\u0000${agent ?? ''}\u0000${callId}`;
}
