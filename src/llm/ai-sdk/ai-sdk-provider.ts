import type { SharedV3ProviderOptions } from '@ai-sdk/provider';
import { ConfigError } from '../../errors.js';
import { DEFAULT_TIMEOUT_MS, type AdapterContext } from '../adapter-kit.js';
import { clientProvider } from '../client-provider.js';
import type { ModelRequest, Provider, ProviderAccepts } from '../types.js';
import { aiSdkFailure } from './ai-sdk-failure.js';
import { callOptions, type CallSettings } from './call-options.js';
import { decodeStream, type StreamPart } from './decode-stream.js';
import { defaultAccepts } from './default-accepts.js';
import { generateResponse, type GenerateResult } from './generate-response.js';
import { checkModel, type AiSdkLanguageModel } from './language-model.js';
import { untilAborted } from './until-aborted.js';

/** Options of `aiSdkProvider`. Keys, base URLs and the like belong to the model's own provider package. */
export type AiSdkProviderOptions = {
  /** The provider's name on the bus (`llm.request.provider`); defaults to the model's `provider` (`openai.chat`…). */
  name?: string;
  /** The longest the model may stay silent, before its first part or between two (default 60 s). */
  timeoutMs?: number;
  /**
   * What the model takes besides text, replacing the default (known for `openai.chat`,
   * `openai.responses`, `anthropic.messages`, `google.generative-ai`; text only for the rest).
   */
  accepts?: ProviderAccepts;
  /** Extra HTTP headers sent with every call (the call options' `headers`). */
  headers?: Readonly<Record<string, string>>;
  /** Provider-specific options sent with every call, e.g. `{ openai: { parallelToolCalls: false } }`. */
  providerOptions?: SharedV3ProviderOptions;
};

/**
 * Any AI SDK language model as a troupe provider: a model from an `@ai-sdk/*` provider package
 * of AI SDK 5 or 6 (Language Model Specification v2 or v3), or one you wrote. `complete` calls
 * its `doGenerate`, `stream` its `doStream`; both protocols work (XML asks the model to stop at
 * `</ACTION>`; native offers the tools as function tools). troupe retries (the provider packages
 * do not: their retries live in `generateText`), classifies failures from the AI SDK's
 * `APICallError` (429 with `retry-after`, 5xx…) and aborts the call with the run.
 *
 * @example
 * import { createAgent } from 'troupe';
 * import { aiSdkProvider } from 'troupe/ai-sdk';
 * import { openai } from '@ai-sdk/openai';
 * const provider = aiSdkProvider(openai('gpt-4o-mini'));
 * const agent = createAgent({ name: 'referee', instructions: 'You referee.', provider });
 */
export function aiSdkProvider(model: AiSdkLanguageModel, options: AiSdkProviderOptions = {}): Provider {
  checkModel(model);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new ConfigError(`aiSdkProvider: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  const name = options.name ?? model.provider;
  if (typeof name !== 'string' || name.trim() === '') throw new ConfigError('aiSdkProvider: name must be a non-empty string');
  // No key ring: the model's provider package holds its own key.
  const context: AdapterContext = { provider: name, timeoutMs };
  const settings: CallSettings = {};
  if (options.headers !== undefined) settings.headers = options.headers;
  if (options.providerOptions !== undefined) settings.providerOptions = options.providerOptions;
  const calls = modelCalls(model, context, settings);
  return clientProvider(context, { model: model.modelId, ...(options.accepts !== undefined && { accepts: options.accepts }) }, {
    accepts: defaultAccepts(model.provider),
    client: () => model,
    complete: calls.complete,
    stream: calls.stream,
  });
}

/** The model's two calls, each with its failures made readable to the adapter kit. */
function modelCalls(model: AiSdkLanguageModel, context: AdapterContext, settings: CallSettings) {
  const generate = (request: ModelRequest, signal: AbortSignal): PromiseLike<GenerateResult> =>
    model.specificationVersion === 'v3'
      ? model.doGenerate(callOptions(request, 'v3', settings, signal))
      : model.doGenerate(callOptions(request, 'v2', settings, signal));
  const open = (request: ModelRequest, signal: AbortSignal): PromiseLike<{ stream: ReadableStream<StreamPart> }> =>
    model.specificationVersion === 'v3'
      ? model.doStream(callOptions(request, 'v3', settings, signal))
      : model.doStream(callOptions(request, 'v2', settings, signal));
  return {
    complete: async (_model: AiSdkLanguageModel, request: ModelRequest, signal: AbortSignal) => {
      try {
        return generateResponse(await untilAborted(generate(request, signal), signal), request);
      } catch (thrown) {
        throw aiSdkFailure(thrown, context.provider, signal);
      }
    },
    stream: async (_model: AiSdkLanguageModel, request: ModelRequest, signal: AbortSignal) => {
      let opened;
      try {
        // An answer that arrives after the abort is never read: its stream is cancelled.
        opened = await untilAborted(open(request, signal), signal, (late) => void late.stream.cancel().catch(() => undefined));
      } catch (thrown) {
        throw aiSdkFailure(thrown, context.provider, signal);
      }
      return decodeStream(opened.stream, { provider: context.provider, request, signal });
    },
  };
}
