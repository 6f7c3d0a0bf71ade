import type { Message, StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { FinishReason, ModelResponse, NativeToolCall, Usage } from '../types.js';
import type { ThinkingBlock } from './thinking-memory.js';

/** Token counts as the API reports them, in `message_start`, `message_delta` or a whole message. */
export type WireUsage = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
};

/**
 * How the turn ended. `pause_turn` (a long server-tool turn the API paused) is a plain `stop`:
 * troupe runs no server tools, and the text so far is the answer. `model_context_window_exceeded`
 * is `length`: the output was cut, so a block in it never runs. An unknown future value is a
 * `stop`, keeping the text.
 */
export function finishOf(
  stopReason: StopReason | string | null | undefined,
  stopSequence: string | null | undefined,
  requested: readonly string[] | undefined,
): { finishReason: FinishReason; stopSequence?: string } {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { finishReason: 'length' };
    case 'tool_use':
      return { finishReason: 'tool_calls' };
    case 'refusal':
      return { finishReason: 'refusal' };
    case 'stop_sequence': {
      // The API names the sequence; a compatible server that does not is taken at its word
      // only when a single sequence was asked for.
      const sequence = stopSequence ?? (requested?.length === 1 ? requested[0] : undefined);
      return sequence === undefined ? { finishReason: 'stop_sequence' } : { finishReason: 'stop_sequence', stopSequence: sequence };
    }
    default:
      return { finishReason: 'stop' };
  }
}

/** troupe's usage: input counts the cache writes and reads too, as the API bills them. */
export function usageOf(usage: WireUsage): Usage {
  const inputTokens = (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
  const outputTokens = usage.output_tokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}

/**
 * Maps a whole message (the non-streaming answer) to a troupe response, plus the thinking blocks
 * that preceded its tool calls (for the adapter to send back with that turn).
 */
export function anthropicResponse(message: Message, requested: readonly string[] | undefined): { response: ModelResponse; thinking: ThinkingBlock[] } {
  const text: string[] = [];
  const toolCalls: NativeToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text.push(block.text);
    else if (block.type === 'tool_use') {
      // The API has already parsed the input: serialise it back to the JSON text troupe expects.
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
    } else if (block.type === 'thinking') thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else if (block.type === 'redacted_thinking') thinking.push({ type: 'redacted_thinking', data: block.data });
  }
  const response: ModelResponse = { text: text.join(''), ...finishOf(message.stop_reason, message.stop_sequence, requested) };
  if (toolCalls.length > 0) response.toolCalls = toolCalls;
  if (message.usage !== undefined && message.usage !== null) response.usage = usageOf(message.usage);
  return { response, thinking };
}
