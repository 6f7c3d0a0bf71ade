/**
 * troupe: a runtime for LLM agents as actors. One import serves the common case.
 *
 * @example
 * import { createAgent, defineTool, scriptedProvider } from 'troupe';
 */
export { createAgent } from './agent/create-agent.js';
export type { Agent, AgentOptions, PendingApproval, RunResult } from './agent/agent-options.js';
export { createBus } from './bus/bus.js';
export { safeJson, serializeEnvelope } from './bus/serialize-event.js';
export type { Bus, BusOptions, EventFilter, EventMeta, Unsubscribe } from './bus/bus.js';
export { CATALOGUE_VERSION } from './bus/events.js';
export type {
  AgentStateName,
  CallRecord,
  Envelope,
  EnvelopeOf,
  EventType,
  Pattern,
  RunReason,
  RunStats,
  TroupeEvents,
} from './bus/events.js';
export { createBufferedDelivery, createEventQueue, SAMPLED_TYPES, subscribeBuffered } from './bus/backpressure.js';
export type {
  Backpressure,
  BackpressurePolicy,
  BufferedDelivery,
  BufferedHandler,
  BufferedOptions,
  BufferedSubscription,
  Delivery,
  DeliveryHooks,
  EventQueue,
  Overflow,
} from './bus/backpressure.js';
export { patternMatcher } from './bus/pattern-match.js';
export { randomIds, sequentialIds, steppedClock } from './bus/ids.js';
export type { Clock, IdSource } from './bus/ids.js';
export { ConfigError, LogError, ScriptError, ToolSchemaError, TroupeError } from './errors.js';
export type { TroupeErrorCode } from './errors.js';
export { ProviderError } from './llm/provider-error.js';
export { anthropicProvider, type AnthropicProviderOptions, type AnthropicThinking } from './llm/anthropic-provider.js';
export { geminiProvider, type GeminiProviderOptions, type GeminiThinking } from './llm/gemini-provider.js';
export { openaiProvider, type OpenAIProviderOptions } from './llm/openai-provider.js';
export { resolveModel, OLLAMA_BASE_URL } from './llm/resolve-model.js';
export { KeyRing } from './llm/key-ring.js';
export type { AdapterOptions } from './llm/adapter-options.js';
export { scriptedProvider } from './llm/scripted-provider.js';
export { cassetteProvider, recordProvider, CASSETTE_VERSION } from './llm/cassette.js';
export type { CassetteEntry, CassetteProvider, RecordOptions } from './llm/cassette.js';
export type { ScriptedProvider, ScriptedTurn, ScriptFunction } from './llm/scripted-provider.js';
export type * from './llm/types.js';
export { renderManifest } from './protocol/manifest.js';
export { parseOutput } from './protocol/parse-output.js';
export { parseNativeCalls } from './protocol/parse-native.js';
export { createActionScanner } from './protocol/scan-output.js';
export { renderAction, renderCall } from './protocol/render-call.js';
export type * from './protocol/types.js';
export { DEFAULT_LIMITS } from './protocol/types.js';
export { createSessionLog } from './record/session-log.js';
export type { SessionLog } from './record/session-log.js';
export { readLog } from './record/read-log.js';
export { startInspector } from './inspect/start-inspector.js';
export type { ControlCommand, Inspector, InspectorNotice, InspectorOptions, InspectorState } from './inspect/start-inspector.js';
export { createEventHistory } from './inspect/event-history.js';
export type { EventHistory, EventHistoryOptions, HistorySlice } from './inspect/event-history.js';
export { createTickGate } from './inspect/tick-gate.js';
export type { GatedScene, TickGate } from './inspect/tick-gate.js';
export { defineTool } from './tools/define-tool.js';
export { createRegistry } from './tools/registry.js';
export type { Registry } from './tools/registry.js';
export { validateCalls } from './tools/validate-calls.js';
export { classifyError, createDispatchStats, createToolLimiters, dispatchTurn, ToolError } from './tools/dispatch-turn.js';
export type { CallResult, DispatchOptions, DispatchStats } from './tools/dispatch-turn.js';
export type * from './tools/types.js';
export { Budget } from './agent/budget.js';
export type { BudgetKind, BudgetLimits, BudgetRefusal, BudgetUsage } from './agent/budget.js';
export type { PendingObservation, RunOptions } from './agent/agent-options.js';
export type { ObservedCall } from './agent/observation-text.js';
export { createScene } from './scene/create-scene.js';
export { defineScene, sceneOptionsFrom } from './scene/define-scene.js';
export type { SceneContext, SceneDefinition, SceneOptionSpec, SceneOptionValues } from './scene/define-scene.js';
export { BUILT_IN_TOOLS } from './scene/scene-tools.js';
export type * from './scene/types.js';
export type * from './scene/world-types.js';
export { SceneError, WorldError } from './errors.js';
export { defineSkill } from './skills/define-skill.js';
export { MAX_SKILL_DEPTH } from './skills/skill-frame.js';
export type * from './skills/types.js';
export { toolResult, isToolResult, sniffImage, RESULT_LIMITS, IMAGE_MEDIA_TYPES } from './tools/result-parts.js';
export type { ImageMediaType, ImagePart, JsonPart, ResultPart, ResultPartInfo, TextPart, ToolResult } from './tools/result-parts.js';
export { DEFAULT_MAX_INLINE_BINARY_BYTES } from './record/binary-parts.js';
export type { LoggedImage, LoggedResult } from './record/binary-parts.js';
export type { SessionLogOptions } from './record/session-log.js';
export { repairWithModel } from './agent/repair-with-model.js';
export type { RepairWithModelOptions } from './agent/repair-with-model.js';
export type {
  BeforeModelContext,
  PendingResultApproval,
  RepairContext,
  RepairedCall,
  RepairFunction,
} from './agent/agent-options.js';
export type { RepairedCallView, RepairSource } from './bus/events.js';
export { dropOldest, summarizeOldest, transcriptText } from './agent/memory/compaction.js';
export type { CompactionPolicy, CompactionRequest, CompactionResult, MemoryTurn, SummarizeOptions, Summarizer } from './agent/memory/compaction.js';
export type { AgentMemory, MemoryOptions } from './agent/memory/agent-memory.js';
export { countMessageTokens, countTokens, encodingFor, tokenizerFor, MESSAGE_OVERHEAD_TOKENS } from './agent/memory/token-count.js';
export type { TokenCounter, TokenEncoding, Tokenizer } from './agent/memory/token-count.js';
export { READ_VAR } from './agent/memory/read-var-tool.js';
export type { VariableInfo, VariableLimits, VariableRead } from './agent/memory/variables.js';
