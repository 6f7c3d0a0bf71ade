/** The provider contract: one deliberation in, one model reply out. */
import type { FinishReason, ImageMediaType, NativeToolCall, Usage } from '../bus/event-data.js';

export type { FinishReason, NativeToolCall, ProviderErrorKind, Usage } from '../bus/event-data.js';

/** An image sent to the model with a message: checked bytes of a format every provider takes. */
export type MessageImage = { data: Uint8Array; mediaType: ImageMediaType };

/**
 * The conversation, provider-neutral: system, user, assistant and tool messages. `images` ride along with
 * the text of a user or tool message (rich tool results); `content` still names them, so a
 * provider that drops them loses no more than the pictures.
 */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; images?: readonly MessageImage[] }
  | { role: 'assistant'; content: string; toolCalls?: NativeToolCall[] }
  | {
      role: 'tool';
      callId: string;
      name: string;
      content: string;
      images?: readonly MessageImage[];
      /** The call failed, was rejected, denied, or its result withheld: `content` says which. */
      failed?: true;
    };

/**
 * What a provider can carry besides text. The agent attaches a tool's images only where the
 * provider says it takes them; elsewhere the model reads a placeholder naming each image.
 */
export type ProviderAccepts = {
  /** Images inside a native tool result (Anthropic `tool_result`, Gemini `functionResponse`). */
  imagesInToolResults?: boolean;
  /** Images in a user message (all three adapters, for models with vision). */
  imagesInUserMessages?: boolean;
};

/** A tool as offered to a provider for native function calling. */
export type ToolSpec = { name: string; description: string; parameters: Record<string, unknown> };

/**
 * Whether the model may, must or must not call tools: `auto` (it decides), `required` (at least
 * one call), `none` (no calls), or `{ tool }` (a call of that tool).
 */
export type ToolChoice = 'auto' | 'required' | 'none' | { tool: string };

export type ModelRequest = {
  messages: readonly ChatMessage[];
  /** Offered for native function calling; absent with the XML protocol. */
  tools?: readonly ToolSpec[];
  toolChoice?: ToolChoice;
  /**
   * Structured output: the final answer is JSON matching `schema` (a JSON Schema of an object).
   * Adapters send it in the provider's own form (OpenAI `response_format`, Anthropic
   * `output_config.format`, Gemini `responseJsonSchema`, AI SDK `responseFormat`); the agent
   * validates the answer whatever the provider did with it.
   */
  output?: { name: string; schema: Record<string, unknown> };
  stop?: readonly string[];
  temperature?: number;
  maxTokens?: number;
  /**
   * Aborts with the run. An agent's request makes it on first read (an own enumerable getter, so a
   * spread keeps it): a provider that never looks at it costs no AbortSignal.
   */
  signal: AbortSignal;
  /** 1-based deliberation number within the run. */
  round: number;
  agent: string;
};

export type ModelResponse = {
  text: string;
  toolCalls?: NativeToolCall[];
  finishReason: FinishReason;
  stopSequence?: string;
  usage?: Usage;
  /**
   * A scripted brain chose to do nothing this turn: the run ends quietly (`final_answer`, empty
   * text) instead of treating the empty reply as a mistake to correct.
   */
  passed?: boolean;
};

/** What a streaming provider yields; the last event is `finish`. */
export type StreamEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call_delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'finish'; response: ModelResponse };

/** A model. `complete` is required; adapters that can stream also offer `stream`. */
export type Provider = {
  readonly name: string;
  readonly model?: string;
  /** What the provider takes besides text; absent means text only (images become placeholders). */
  readonly accepts?: ProviderAccepts;
  /**
   * True for a provider that is a function of its request and costs nothing to call (a scripted
   * brain): a resume asks it again rather than take its reply from the log, so that whatever it
   * draws from its agent's seeded generator is drawn again; the reply is still checked against the log.
   */
  readonly pure?: boolean;
  /**
   * `false` for a provider that spends no tokens (a scene's scripted brain): a reply without usage
   * is then taken as free. Otherwise (the default) the agent estimates the usage a reply leaves out.
   */
  readonly spendsTokens?: boolean;
  complete(request: ModelRequest): Promise<ModelResponse>;
  /**
   * Optional: `complete` for providers that often know their answer at once (a scripted brain). A
   * response returned directly lets the agent go on in the same step; a promise works as usual.
   */
  completeNow?(request: ModelRequest): ModelResponse | Promise<ModelResponse>;
  stream?(request: ModelRequest): AsyncIterable<StreamEvent>;
};

