import OpenAI from 'openai';
import { adapterContext, type AdapterOptions } from './adapter-options.js';
import { clientProvider } from './client-provider.js';
import { chatRequest, isReasoningModel, type ChatRequestSettings } from './openai/chat-request.js';
import { chatResponse } from './openai/chat-response.js';
import { decodeChatStream } from './openai/decode-chat-stream.js';
import type { Provider } from './types.js';

/** Options of `openaiProvider`: the shared adapter options, plus the OpenAI-specific ones. */
export type OpenAIProviderOptions = AdapterOptions & {
  /**
   * Treat the model as one of OpenAI's reasoning models: the token limit goes in
   * `max_completion_tokens`, and `stop` and `temperature` (which they refuse) are left out.
   * Default: guessed from the model name (o1, o3, o4-mini, gpt-5…); everything else gets `max_tokens`.
   */
  reasoningModel?: boolean;
};

/** Sent as the key to servers that take none: the client refuses to start without one. */
const NO_KEY = 'no-key';

/** The client's own timer is off (its longest setTimeout): troupe's silence timer governs instead. */
const CLIENT_TIMEOUT_MS = 2_147_483_647;

/**
 * A provider for OpenAI's Chat Completions API and every server that speaks it: OpenAI itself,
 * Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, or a proxy. Keys come from `apiKey`/`apiKeys`
 * or `OPENAI_API_KEY` (comma-separated for several); the server from `baseURL` or
 * `OPENAI_BASE_URL`. A local server given by a baseURL needs no key.
 *
 * @example
 * import { openaiProvider } from 'troupe/openai';
 * const openai = openaiProvider({ model: 'gpt-4o-mini' });
 * const local = openaiProvider({ model: 'qwen3:8b', baseURL: 'http://127.0.0.1:11434/v1' });
 * const agent = createAgent({ name: 'referee', provider: local, tools: [lookupPlayer] });
 */
export function openaiProvider(options: OpenAIProviderOptions): Provider {
  const baseURL = options?.baseURL ?? nonEmpty(process.env['OPENAI_BASE_URL']);
  const context = adapterContext(
    { ...options, ...(baseURL !== undefined && { baseURL }) },
    { provider: 'openai', envKeys: ['OPENAI_API_KEY'], keyOptional: true },
  );
  const settings: ChatRequestSettings = { model: options.model, reasoningModel: options.reasoningModel ?? isReasoningModel(options.model) };
  return clientProvider(context, options, {
    // Chat Completions tool messages are text only: the agent sends a tool's images in a user
    // message after them, as `image_url` data URLs.
    accepts: { imagesInToolResults: false, imagesInUserMessages: true },
    // The key is the client's, never a header we build.
    client: (key) =>
      new OpenAI({
        apiKey: key?.value ?? NO_KEY,
        ...(baseURL !== undefined && { baseURL }),
        // troupe's agent retries, with backoff and the server's retry-after, and reports each attempt.
        maxRetries: 0,
        timeout: CLIENT_TIMEOUT_MS,
        ...(options.headers !== undefined && { defaultHeaders: { ...options.headers } }),
      }),
    complete: async (client, request, signal) => {
      const body = chatRequest(request, settings);
      const completion = await client.chat.completions.create({ ...body, stream: false }, { signal });
      return chatResponse(completion, body.stop);
    },
    stream: async (client, request, signal) => {
      const body = chatRequest(request, settings);
      const chunks = await client.chat.completions.create(
        // include_usage: the token counts arrive in one last chunk, after finish_reason.
        { ...body, stream: true, stream_options: { include_usage: true } },
        { signal },
      );
      return decodeChatStream(chunks, { provider: context.provider, signal, stopSent: body.stop });
    },
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}
