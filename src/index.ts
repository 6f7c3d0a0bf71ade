/**
 * troupe: a runtime for LLM agents as actors. This entry point serves the common case: agents,
 * tools, scenes, skills, the bus, a scripted model, the errors and the main types. The rest lives
 * on subpaths: `troupe/bus`, `troupe/protocol`, `troupe/tools`, `troupe/memory`, `troupe/record`,
 * `troupe/inspect`, `troupe/providers`, `troupe/testing`, `troupe/panel`, and one subpath per
 * provider adapter (`troupe/openai`, `troupe/anthropic`, `troupe/gemini`).
 *
 * @example
 * import { createAgent, defineTool, scriptedProvider } from 'troupe';
 */
export { createAgent } from './agent/create-agent.js';
export type {
  Agent,
  AgentEngine,
  AgentOptions,
  BeforeModelContext,
  PendingApproval,
  PendingObservation,
  PendingResultApproval,
  RepairContext,
  RepairedCall,
  RepairFunction,
  ResumeOptions,
  RunOptions,
  RunResult,
} from './agent/agent-options.js';
export type { AgentInspect } from './agent/xstate-engine.js';
export type { OutputOf, OutputSchema } from './agent/output-schema.js';
export type { AgentSnapshot } from './agent/run/agent-snapshot.js';
export type { CallHistoryEntry, ModelCallRecord } from './agent/run/run-record.js';
export type { RunInput, RunMessage } from './agent/run/run-input.js';
export type { AgentStream, AgentStreamOptions } from './agent/stream/agent-stream.js';
export type { AgentStreamEvent } from './agent/stream/stream-event.js';
export { Budget } from './agent/budget.js';
export type { BudgetKind, BudgetLimits, BudgetRefusal, BudgetUsage } from './agent/budget.js';
export { costOf, DEFAULT_PRICES, priceFor, PRICES_TAKEN, type ModelPrice, type PriceTable } from './llm/prices.js';
export { repairWithModel, type RepairWithModelOptions } from './agent/repair-with-model.js';
export { dropOldest, summarizeOldest } from './agent/memory/compaction.js';
export type { AgentMemory, MemoryOptions } from './agent/memory/agent-memory.js';
export type { ObservedCall } from './agent/observation-text.js';

export { createBus } from './bus/bus.js';
export type { Bus, BusOptions, EventFilter, EventMeta, Unsubscribe } from './bus/bus.js';
export type { AgentStateName, CallRecord, Envelope, EnvelopeOf, EventType, Pattern, RunReason, RunStats, TroupeEvents } from './bus/events.js';
export type { Args, JsonValue, Usage } from './bus/event-data.js';

export { defineTool } from './tools/define-tool.js';
export { toolResult } from './tools/result-parts.js';
export type { ArgsOf, JsonSchema, KindRetry, LooseArgs, RetryKind, RetryPolicy, ToolRetryPolicy, Tool, ToolContext, ToolDefinition, ToolFailure, ToolErrorKind, ToolOptions, ToolParameters } from './tools/types.js';
export type { ToolResult, ResultPart } from './tools/result-parts.js';

export { scriptedProvider } from './llm/scripted-provider.js';
export type { ScriptedProvider, ScriptedReply, ScriptFunction } from './llm/scripted-provider.js';
export type { ChatMessage, MessageImage, ModelRequest, ModelResponse, Provider, StreamEvent } from './llm/types.js';

export { createScene } from './scene/create-scene.js';
export { defineScene, sceneOptionsFrom } from './scene/define-scene.js';
export type { SceneContext, SceneDefinition, SceneOptionSpec, SceneOptionValues } from './scene/define-scene.js';
export { BUILT_IN_TOOLS } from './scene/scene-tools.js';
export type * from './scene/types.js';
export type { WorldPath, WorldReader, WorldState, WorldWriter } from './scene/world-types.js';
export { resumeScene } from './record/resume-scene.js';
export type { ResumeSceneOptions, ResumeResult } from './record/resume-scene.js';
export { replayScene } from './record/replay-scene.js';
export { resumeAgent } from './record/resume-agent.js';
export type { ResumeAgentOptions, ResumedAgent } from './record/resume-agent.js';
export type { ReplaySceneOptions, ReplayReport } from './record/replay-scene.js';
export { defineSkill } from './skills/define-skill.js';
export { MAX_SKILL_DEPTH } from './skills/skill-frame.js';
export type * from './skills/types.js';

export { ConfigError, LogError, SceneError, ScriptError, ToolSchemaError, TroupeError, WorldError } from './errors.js';
export type { TroupeErrorCode } from './errors.js';
export { ProviderError } from './llm/provider-error.js';
export { ToolError } from './tools/tool-error.js';
