/**
 * Google Gemini through the official `@google/genai` client: `generateContent` for `complete`,
 * `generateContentStream` (`:streamGenerateContent?alt=sse`) for `stream`.
 */
import { GoogleGenAI, type GenerateContentParameters } from '@google/genai';
import { ConfigError } from '../errors.js';
import { adapterContext, type AdapterOptions } from './adapter-options.js';
import { clientProvider } from './client-provider.js';
import { geminiFailure, streamCut } from './gemini/gemini-failure.js';
import type { GeminiThinking } from './gemini/gemini-thinking.js';
import { mapRequest } from './gemini/map-request.js';
import { TurnReader } from './gemini/read-turn.js';
import { ThoughtSignatures } from './gemini/thought-signatures.js';
import { ProviderError } from './provider-error.js';
import type { ModelRequest, Provider, StreamEvent } from './types.js';

export type { GeminiThinking } from './gemini/gemini-thinking.js';

/** What `geminiProvider` takes: the shared adapter options, plus Gemini's thinking controls. */
export type GeminiProviderOptions = AdapterOptions & {
  /** `thinkingConfig` for thinking models (Gemini 2.5 and later). */
  thinking?: GeminiThinking;
};

/**
 * A Provider for Google's Gemini API. Keys come from `apiKey`/`apiKeys`, else `GOOGLE_API_KEY` or
 * `GEMINI_API_KEY` (comma-separated for several; `GOOGLE_API_KEY` wins when both are set, as in
 * the official client). The key travels in the `x-goog-api-key` header, never in the URL. The
 * client's own retries stay off and troupe's silence timer replaces its timeout, so the agent's
 * retry policy is the only one.
 *
 * @example
 * import { geminiProvider } from 'troupe/gemini';
 * const provider = geminiProvider({ model: 'gemini-2.5-flash', thinking: { includeThoughts: true } });
 * const agent = createAgent({ name: 'referee', provider, tools: [lookupPlayer], protocol: 'native' });
 */
export function geminiProvider(options: GeminiProviderOptions): Provider {
  const context = adapterContext(options, { provider: 'gemini', envKeys: ['GOOGLE_API_KEY', 'GEMINI_API_KEY'], keyOptional: false });
  const thinking = checkedThinking(options.thinking, context.provider);
  const headers = checkedHeaders(options.headers, context.provider);
  const { model } = options;
  const signatures = new ThoughtSignatures();

  const parameters = (request: ModelRequest, signal: AbortSignal): GenerateContentParameters => {
    const { contents, config } = mapRequest(request, { model, signatures, ...(thinking !== undefined && { thinking }) });
    if (contents.length === 0) {
      throw new ProviderError('bad_request', `${context.provider}: the request has no user or assistant message to answer`);
    }
    return { model, contents, config: { ...config, abortSignal: signal } };
  };

  return clientProvider(context, options, {
    // Images go back inside function responses (Gemini 3) or beside them (earlier models).
    accepts: { imagesInToolResults: true, imagesInUserMessages: true },
    client: (key) =>
      new GoogleGenAI({
        ...(key !== undefined && { apiKey: key.value }),
        // The Gemini Developer API even when GOOGLE_GENAI_USE_VERTEXAI is set in the environment.
        vertexai: false,
        // No `retryOptions`: without them the client makes one plain fetch. (With them, even
        // `attempts: 1`, its p-retry wrapper replaces the HTTP error with one that has no status.)
        // No `timeout` either: troupe's silence timer aborts through `abortSignal`.
        httpOptions: { ...(options.baseURL !== undefined && { baseUrl: options.baseURL }), headers: { ...headers } },
      }),
    complete: async (client, request, signal) => {
      const call = parameters(request, signal);
      const reader = new TurnReader(request, signatures);
      try {
        reader.read(await client.models.generateContent(call));
      } catch (thrown) {
        throw geminiFailure(thrown);
      }
      return reader.finish().response;
    },
    stream: (client, request, signal) => streamTurn(client, parameters(request, signal), new TurnReader(request, signatures)),
  });
}

/**
 * One streamed turn: each SSE chunk's parts as events, then `finish`. Gemini has no end marker
 * besides the finish reason on the last chunk, so a body that ends before one is a cut stream.
 */
async function* streamTurn(client: GoogleGenAI, call: GenerateContentParameters, reader: TurnReader): AsyncGenerator<StreamEvent> {
  try {
    for await (const chunk of await client.models.generateContentStream(call)) yield* reader.read(chunk);
  } catch (thrown) {
    throw geminiFailure(thrown);
  }
  if (!reader.ended) throw streamCut('the Gemini stream ended without a finish reason');
  yield reader.finish();
}

function checkedThinking(thinking: GeminiThinking | undefined, provider: string): GeminiThinking | undefined {
  if (thinking === undefined) return undefined;
  if (thinking === null || typeof thinking !== 'object') throw new ConfigError(`${provider}: thinking must be an object like { budgetTokens: 1024, includeThoughts: true }`);
  const budget = thinking.budgetTokens;
  if (budget !== undefined && !(Number.isSafeInteger(budget) && budget >= -1)) {
    throw new ConfigError(`${provider}: thinking.budgetTokens must be an integer ≥ -1 (0 turns thinking off, -1 lets the model decide), got ${String(budget)}`);
  }
  if (thinking.includeThoughts !== undefined && typeof thinking.includeThoughts !== 'boolean') {
    throw new ConfigError(`${provider}: thinking.includeThoughts must be true or false, got ${String(thinking.includeThoughts)}`);
  }
  return { ...thinking };
}

/** A key in `headers` would win over the ring's key (the client keeps a header already set) and defeat rotation. */
function checkedHeaders(headers: Readonly<Record<string, string>> | undefined, provider: string): Record<string, string> {
  const copy = { ...headers };
  if (Object.keys(copy).some((name) => name.toLowerCase() === 'x-goog-api-key')) {
    throw new ConfigError(`${provider}: pass the API key as apiKey or apiKeys, not as an x-goog-api-key header`);
  }
  return copy;
}
