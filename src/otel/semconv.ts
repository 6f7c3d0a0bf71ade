/**
 * The attribute, span and metric names troupe's spans use. The `gen_ai.*` names follow the
 * OpenTelemetry GenAI semantic conventions (status: development), copied here rather than imported
 * from `@opentelemetry/semantic-conventions`, whose own advice is to copy unstable names: they may
 * change between its releases. The `troupe.*` names are troupe's own, for what the conventions do
 * not cover (runs, rounds, scenes, ticks, attempts).
 */

/** `gen_ai.*` and `error.type`, as the GenAI conventions spell them. */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  tokenType: 'gen_ai.token.type',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  workflowName: 'gen_ai.workflow.name',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
} as const;

/** troupe's own attributes, for what the GenAI conventions have no name for. */
export const TROUPE = {
  scene: 'troupe.scene.name',
  tick: 'troupe.scene.tick',
  seed: 'troupe.scene.seed',
  stopReason: 'troupe.scene.stop_reason',
  trigger: 'troupe.trigger.reason',
  runReason: 'troupe.run.reason',
  rounds: 'troupe.run.rounds',
  calls: 'troupe.run.calls',
  round: 'troupe.llm.round',
  attempts: 'troupe.llm.attempts',
  toolAttempt: 'troupe.tool.attempt',
  content: 'troupe.content',
} as const;

/** The `gen_ai.operation.name` values troupe reports. */
export const OPERATION = {
  agent: 'invoke_agent',
  chat: 'chat',
  tool: 'execute_tool',
  workflow: 'invoke_workflow',
} as const;

/** The `error.type` of a span that ended without its own closing event (a run's finish, `close()`). */
export const INTERRUPTED = 'interrupted';

/** The conventions' fallback `error.type`, for a failed run troupe cannot classify further. */
export const OTHER_ERROR = '_OTHER';

/** The two client metrics of the GenAI conventions, with their units and advised buckets. */
export const METRICS = {
  tokenUsage: {
    name: 'gen_ai.client.token.usage',
    unit: '{token}',
    description: 'Number of input and output tokens used.',
    buckets: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  },
  duration: {
    name: 'gen_ai.client.operation.duration',
    unit: 's',
    description: 'GenAI operation duration.',
    buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  },
} as const;

// troupe's adapter names that differ from the conventions' well-known provider names; the rest
// (`openai`, `anthropic`, a custom `name` such as `ollama`, `scripted`, `brain`) pass unchanged.
const PROVIDER_NAMES: ReadonlyMap<string, string> = new Map([['gemini', 'gcp.gemini']]);

/** The `gen_ai.provider.name` for a provider's `name` as `llm.request` reports it. */
export function genAiProviderName(provider: string): string {
  return PROVIDER_NAMES.get(provider) ?? provider;
}
