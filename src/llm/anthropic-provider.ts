import Anthropic from '@anthropic-ai/sdk';
import { ConfigError } from '../errors.js';
import { adapterContext, type AdapterOptions } from './adapter-options.js';
import { decodeStream } from './anthropic/decode-stream.js';
import type { AnthropicThinking } from './anthropic/anthropic-thinking.js';
import { anthropicRequest, type RequestDefaults } from './anthropic/map-request.js';
import { anthropicResponse } from './anthropic/map-response.js';
import { ThinkingMemory } from './anthropic/thinking-memory.js';
import { clientProvider } from './client-provider.js';
import { ProviderError } from './provider-error.js';
import type { Provider } from './types.js';

export type { AnthropicThinking } from './anthropic/anthropic-thinking.js';

/** Options of `anthropicProvider`: the shared adapter options plus Anthropic's own. */
export type AnthropicProviderOptions = AdapterOptions & {
  /** `max_tokens` when the agent sets none (the API requires one; default 4,096, plus the thinking budget). */
  maxTokens?: number;
  /** Extended thinking, streamed as `reasoning`: `{ budgetTokens }` (at least 1,024) or `'adaptive'`. */
  thinking?: AnthropicThinking;
};

/**
 * The client's own request timer, set far beyond any silence troupe allows: the adapter's silence
 * timer aborts the request, and a value past 2^31 - 1 ms would overflow Node's timers.
 */
const CLIENT_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/**
 * A provider for Anthropic's Messages API through the official `@anthropic-ai/sdk` client
 * (`messages.create`, with `stream: true` for `stream`). Keys come from `apiKey`/`apiKeys` or
 * `ANTHROPIC_API_KEY` (comma-separated for several); `baseURL` defaults to `ANTHROPIC_BASE_URL`,
 * then to the public API.
 *
 * @example
 * import { createAgent } from 'troupe';
 * import { anthropicProvider } from 'troupe/anthropic';
 * const provider = anthropicProvider({ model: 'claude-sonnet-5-5' });
 * const agent = createAgent({ name: 'scribe', instructions: 'Answer briefly.', provider });
 */
export function anthropicProvider(options: AnthropicProviderOptions): Provider {
  const context = adapterContext(options, { provider: 'anthropic', envKeys: ['ANTHROPIC_API_KEY'], keyOptional: false });
  validate(options);
  const memory = new ThinkingMemory();
  const defaults: RequestDefaults = { model: options.model, memory };
  if (options.maxTokens !== undefined) defaults.maxTokens = options.maxTokens;
  if (options.thinking !== undefined) defaults.thinking = options.thinking;
  return clientProvider(context, options, {
    // `tool_result` blocks take image blocks beside their text.
    accepts: { imagesInToolResults: true, imagesInUserMessages: true },
    client: (key) => {
      if (key === undefined) throw new ProviderError('auth', `${context.provider}: no API key to send`, { retryable: false });
      return new Anthropic({
        apiKey: key.value,
        ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
        ...(options.headers !== undefined && { defaultHeaders: { ...options.headers } }),
        // troupe's agent retries with backoff and publishes each failure; the client must not.
        maxRetries: 0,
        timeout: CLIENT_TIMEOUT_MS,
      });
    },
    complete: async (client, request, signal) => {
      const message = await client.messages.create({ ...anthropicRequest(request, defaults), stream: false }, { signal });
      const { response, thinking } = anthropicResponse(message, request.stop);
      const firstCall = response.toolCalls?.[0];
      if (firstCall !== undefined) memory.remember(firstCall.id, thinking);
      return response;
    },
    stream: async (client, request, signal) => {
      const events = await client.messages.create({ ...anthropicRequest(request, defaults), stream: true }, { signal });
      return decodeStream(events, { stop: request.stop, memory });
    },
  });
}

/** Host mistakes are thrown when the provider is made, before any model call. */
function validate(options: AnthropicProviderOptions): void {
  if (options.maxTokens !== undefined && !(Number.isSafeInteger(options.maxTokens) && options.maxTokens > 0)) {
    throw new ConfigError(`anthropic: maxTokens must be a positive integer, got ${String(options.maxTokens)}`);
  }
  const thinking = options.thinking;
  if (thinking === undefined || thinking === 'adaptive') return;
  if (typeof thinking !== 'object' || !Number.isSafeInteger(thinking.budgetTokens) || thinking.budgetTokens < 1024) {
    throw new ConfigError(
      `anthropic: thinking must be 'adaptive' or { budgetTokens } with at least 1024 tokens, got ${JSON.stringify(thinking)}`,
    );
  }
  if (options.maxTokens !== undefined && options.maxTokens <= thinking.budgetTokens) {
    throw new ConfigError(`anthropic: maxTokens (${options.maxTokens}) must be more than thinking.budgetTokens (${thinking.budgetTokens})`);
  }
}
