import type { ModelRequest, ModelResponse, Provider, Usage } from '../llm/types.js';
import { countMessageTokens, tokenizerFor } from './memory/token-count.js';

/**
 * The usage of one model call counted by troupe: the request's messages (and native tool
 * declarations) as input, the reply's text and native calls as output, in the encoding of the
 * provider's family (see `tokenizerFor`), marked `estimated`. The tokenizer's tables load at the
 * first count, so an agent whose provider always reports usage never pays for them.
 *
 * @example
 * estimateUsage(request, { text: 'Player 7 is Ana.', finishReason: 'stop' }, provider);
 * // { inputTokens: 31, outputTokens: 6, totalTokens: 37, estimated: true }
 */
export function estimateUsage(request: Pick<ModelRequest, 'messages' | 'tools'>, response: ModelResponse, provider: Pick<Provider, 'name' | 'model'>): Usage {
  const { count } = tokenizerFor(provider);
  let inputTokens = countMessageTokens(request.messages, count);
  if (request.tools !== undefined && request.tools.length > 0) inputTokens += count(JSON.stringify(request.tools));
  let outputTokens = count(response.text);
  for (const call of response.toolCalls ?? []) outputTokens += count(call.name) + count(call.arguments);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, estimated: true };
}

/**
 * The response with its usage: the provider's own, or an estimate when it sent none — unless the
 * provider spends no tokens (`spendsTokens: false`, a scripted brain). A malformed response is
 * returned as it is, for the caller to reject.
 */
export function withUsage(response: ModelResponse, request: Pick<ModelRequest, 'messages' | 'tools'>, provider: Provider): ModelResponse {
  if (response === null || typeof response !== 'object' || typeof response.text !== 'string') return response;
  if (response.usage !== undefined || provider.spendsTokens === false) return response;
  return { ...response, usage: estimateUsage(request, response, provider) };
}
