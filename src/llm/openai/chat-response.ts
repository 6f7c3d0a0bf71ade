import type { ChatCompletion, ChatCompletionMessage } from 'openai/resources/chat/completions';
import type { ModelResponse, NativeToolCall } from '../types.js';
import { finishOf, usageOf } from './finish-reason.js';

/** Maps a whole chat completion (the non-streaming answer) to a troupe ModelResponse. */
export function chatResponse(completion: ChatCompletion, stopSent: readonly string[] | undefined): ModelResponse {
  // troupe asks for one choice (no `n`); a server that sends none answered nothing.
  const choice = completion.choices?.find((candidate) => candidate.index === 0) ?? completion.choices?.[0];
  const usage = usageOf(completion.usage);
  if (choice === undefined) return { text: '', finishReason: 'error', ...(usage !== undefined && { usage }) };
  const message: ChatCompletionMessage | undefined = choice.message;
  const refusal = typeof message?.refusal === 'string' && message.refusal !== '' ? message.refusal : undefined;
  // A refusal comes instead of content: its text is what the model said.
  const text = refusal ?? (typeof message?.content === 'string' ? message.content : '');
  const toolCalls = message === undefined ? [] : nativeCalls(message);
  const response: ModelResponse = {
    text,
    ...finishOf(choice.finish_reason, { text, hasCalls: toolCalls.length > 0, refused: refusal !== undefined, stopSent }),
  };
  if (toolCalls.length > 0) response.toolCalls = toolCalls;
  if (usage !== undefined) response.usage = usage;
  return response;
}

/** Function calls, and the legacy `function_call` some compatible servers still send. */
function nativeCalls(message: ChatCompletionMessage): NativeToolCall[] {
  const calls: NativeToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    // Custom (free-text) tools are never offered by troupe, so only function calls can come back.
    if (call.type !== undefined && call.type !== 'function') continue;
    const { name, arguments: args } = (call as { function?: { name?: string; arguments?: string } }).function ?? {};
    calls.push({
      id: call.id || `call_${calls.length + 1}`,
      name: name ?? '',
      // Exactly as sent (broken JSON included: the protocol reports it). Empty means no arguments.
      arguments: typeof args === 'string' && args !== '' ? args : '{}',
    });
  }
  if (calls.length === 0 && message.function_call) {
    const { name, arguments: args } = message.function_call;
    calls.push({ id: 'call_1', name: name ?? '', arguments: args || '{}' });
  }
  return calls;
}
