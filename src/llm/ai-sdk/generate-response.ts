import type { LanguageModelV2, LanguageModelV3 } from '@ai-sdk/provider';
import type { ModelRequest, ModelResponse, NativeToolCall } from '../types.js';
import { finishOf, usageOf } from './finish-reason.js';

/** What a v2 or v3 model's `doGenerate` resolves to. */
export type GenerateResult = Awaited<ReturnType<LanguageModelV2['doGenerate']>> | Awaited<ReturnType<LanguageModelV3['doGenerate']>>;

/**
 * Maps a whole answer (`doGenerate`) to a troupe response: the text parts joined, each function
 * call the model asked for with its input as the JSON text the model wrote, how it finished, and
 * the token counts. Reasoning, sources, files and calls the provider ran itself carry nothing
 * troupe runs or shows in a reply.
 */
export function generateResponse(result: GenerateResult, request: ModelRequest): ModelResponse {
  const text: string[] = [];
  const toolCalls: NativeToolCall[] = [];
  for (const part of result.content ?? []) {
    if (part.type === 'text') text.push(part.text);
    else if (part.type === 'tool-call' && part.providerExecuted !== true) {
      toolCalls.push({
        id: part.toolCallId || `call_${toolCalls.length + 1}`,
        name: part.toolName,
        // Exactly as sent (broken JSON included: the protocol reports it). Empty means no arguments.
        arguments: typeof part.input === 'string' && part.input !== '' ? part.input : '{}',
      });
    }
  }
  const joined = text.join('');
  const response: ModelResponse = {
    text: joined,
    ...finishOf(result.finishReason, { text: joined, hasCalls: toolCalls.length > 0, stop: request.stop, providerMetadata: result.providerMetadata }),
  };
  if (toolCalls.length > 0) response.toolCalls = toolCalls;
  const usage = usageOf(result.usage);
  if (usage !== undefined) response.usage = usage;
  return response;
}
