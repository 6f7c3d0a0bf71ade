import type { JSONSchema7, LanguageModelV2CallOptions, LanguageModelV3CallOptions, SharedV3ProviderOptions } from '@ai-sdk/provider';
import type { ModelRequest } from '../types.js';
import { aiSdkPrompt } from './ai-sdk-prompt.js';

/** What `aiSdkProvider` adds to every call, from its options. */
export type CallSettings = {
  headers?: Readonly<Record<string, string>>;
  providerOptions?: SharedV3ProviderOptions;
};

/**
 * Maps a troupe request onto the model's call options: the prompt, function tools with their
 * JSON Schema and `toolChoice` (`auto`, `required`, `none` are the specification's own words),
 * stop sequences, temperature, the output token limit and the abort signal.
 */
export function callOptions(request: ModelRequest, specification: 'v3', settings: CallSettings, signal: AbortSignal): LanguageModelV3CallOptions;
export function callOptions(request: ModelRequest, specification: 'v2', settings: CallSettings, signal: AbortSignal): LanguageModelV2CallOptions;
export function callOptions(
  request: ModelRequest,
  specification: 'v2' | 'v3',
  settings: CallSettings,
  signal: AbortSignal,
): LanguageModelV3CallOptions | LanguageModelV2CallOptions {
  // The two versions name every option alike; only the prompt's tool results differ.
  const prompt = aiSdkPrompt(request.messages, specification) as LanguageModelV3CallOptions['prompt'];
  const options: LanguageModelV3CallOptions = { prompt, abortSignal: signal };
  if (request.tools !== undefined && request.tools.length > 0) {
    options.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: tool.parameters as JSONSchema7,
    }));
    const choice = request.toolChoice;
    if (typeof choice === 'object') options.toolChoice = { type: 'tool', toolName: choice.tool };
    else if (choice !== undefined) options.toolChoice = { type: choice };
  }
  if (request.output !== undefined) options.responseFormat = { type: 'json', schema: request.output.schema as JSONSchema7, name: request.output.name };
  if (request.stop !== undefined && request.stop.length > 0) options.stopSequences = [...request.stop];
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.maxTokens !== undefined) options.maxOutputTokens = request.maxTokens;
  if (settings.headers !== undefined) options.headers = { ...settings.headers };
  if (settings.providerOptions !== undefined) options.providerOptions = settings.providerOptions;
  return options;
}
