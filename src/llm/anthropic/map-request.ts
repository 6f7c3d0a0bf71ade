import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  ThinkingConfigParam,
  Tool,
  ToolChoice as AnthropicToolChoice,
  TextBlockParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { argumentsObject, base64 } from '../adapter-kit.js';
import type { ChatMessage, MessageImage, ModelRequest, NativeToolCall, ToolChoice } from '../types.js';
import type { AnthropicThinking } from './anthropic-thinking.js';
import type { ThinkingMemory } from './thinking-memory.js';

/** `max_tokens` is required by the Messages API; this is what a request without one asks for. */
export const DEFAULT_MAX_TOKENS = 4096;

/** What the adapter adds to every request. */
export type RequestDefaults = {
  model: string;
  maxTokens?: number;
  thinking?: AnthropicThinking;
  memory: ThinkingMemory;
};

const TOOL_CHOICE: Record<Exclude<ToolChoice, object>, AnthropicToolChoice> = {
  auto: { type: 'auto' },
  required: { type: 'any' },
  none: { type: 'none' },
};

/**
 * Maps a troupe request onto the body of `POST /v1/messages` (without `stream`).
 *
 * `temperature` is not sent: API version 2026-10-21, the one this client speaks, removed it
 * (with `top_p` and `top_k`) and answers 400 to a request that carries it.
 */
export function anthropicRequest(request: ModelRequest, defaults: RequestDefaults): MessageCreateParamsBase {
  const { system, messages } = mapMessages(request.messages, defaults.memory);
  const budget = typeof defaults.thinking === 'object' ? defaults.thinking.budgetTokens : 0;
  const body: MessageCreateParamsBase = {
    model: defaults.model,
    // Thinking tokens count toward max_tokens: the default leaves the answer its own 4,096.
    max_tokens: request.maxTokens ?? defaults.maxTokens ?? DEFAULT_MAX_TOKENS + budget,
    messages,
  };
  if (system !== '') body.system = system;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map(
      (tool): Tool => ({
        name: tool.name,
        description: tool.description,
        input_schema: { type: 'object', ...tool.parameters },
      }),
    );
    if (request.toolChoice !== undefined) body.tool_choice = typeof request.toolChoice === 'object' ? { type: 'tool', name: request.toolChoice.tool } : TOOL_CHOICE[request.toolChoice];
  }
  // Structured outputs: the text answer is constrained to the schema.
  if (request.output !== undefined) body.output_config = { format: { type: 'json_schema', schema: request.output.schema } };
  if (request.stop !== undefined && request.stop.length > 0) body.stop_sequences = [...request.stop];
  const thinking = thinkingConfig(defaults.thinking);
  if (thinking !== undefined) body.thinking = thinking;
  return body;
}

function thinkingConfig(thinking: AnthropicThinking | undefined): ThinkingConfigParam | undefined {
  if (thinking === undefined) return undefined;
  if (thinking === 'adaptive') return { type: 'adaptive' };
  return { type: 'enabled', budget_tokens: thinking.budgetTokens };
}

/**
 * System messages go to the top-level `system` (joined, in order); a run of tool results becomes
 * one user message of `tool_result` blocks, as the API wants them right after the `tool_use` turn.
 */
function mapMessages(history: readonly ChatMessage[], memory: ThinkingMemory): { system: string; messages: MessageParam[] } {
  const system: string[] = [];
  const messages: MessageParam[] = [];
  let results: ToolResultBlockParam[] | undefined;
  for (const message of history) {
    if (message.role !== 'tool') results = undefined;
    switch (message.role) {
      case 'system':
        if (message.content !== '') system.push(message.content);
        break;
      case 'user':
        messages.push({ role: 'user', content: message.images?.length ? [...textBlock(message.content), ...message.images.map(imageBlock)] : message.content });
        break;
      case 'assistant': {
        const content = assistantContent(message.content, message.toolCalls, memory);
        // The API refuses an empty assistant turn; an empty reply carries nothing to send back.
        if (content !== undefined) messages.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        const block: ToolResultBlockParam = { type: 'tool_result', tool_use_id: message.callId };
        if (message.images?.length) block.content = [...textBlock(message.content), ...message.images.map(imageBlock)];
        else if (message.content !== '') block.content = message.content;
        if (message.failed === true) block.is_error = true;
        if (results === undefined) {
          results = [block];
          messages.push({ role: 'user', content: results });
        } else {
          results.push(block);
        }
        break;
      }
    }
  }
  return { system: system.join('\n\n'), messages };
}

/** The API refuses an empty text block. */
function textBlock(text: string): TextBlockParam[] {
  return text === '' ? [] : [{ type: 'text', text }];
}

function imageBlock(image: MessageImage): ImageBlockParam {
  return { type: 'image', source: { type: 'base64', media_type: image.mediaType, data: base64(image.data) } };
}

function assistantContent(
  text: string,
  calls: readonly NativeToolCall[] | undefined,
  memory: ThinkingMemory,
): string | ContentBlockParam[] | undefined {
  if (calls === undefined || calls.length === 0) return text === '' ? undefined : text;
  const blocks: ContentBlockParam[] = [...memory.recall(calls[0]?.id)];
  if (text !== '') blocks.push({ type: 'text', text });
  for (const call of calls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) });
  return blocks;
}
