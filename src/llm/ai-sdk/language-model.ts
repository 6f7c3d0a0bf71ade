/**
 * Which AI SDK language models troupe drives: the Language Model Specification v2 (the provider
 * packages of AI SDK 5, `@ai-sdk/*` 2.x) and v3 (AI SDK 6, `@ai-sdk/*` 3.x). Both run on Node 20;
 * v4 (AI SDK 7) needs Node 22 and is refused with a message that says so.
 */
import type { LanguageModelV2, LanguageModelV3 } from '@ai-sdk/provider';
import { ConfigError } from '../../errors.js';

/** An AI SDK language model troupe can drive: `openai('gpt-4o-mini')`, `anthropic(…)`, a `MockLanguageModelV3`… */
export type AiSdkLanguageModel = LanguageModelV2 | LanguageModelV3;

/** The specification versions `aiSdkProvider` speaks. */
export type AiSdkSpecification = AiSdkLanguageModel['specificationVersion'];

const SUPPORTED: readonly string[] = ['v2', 'v3'];

/**
 * Checks, when the provider is made, that `model` is a language model of a supported
 * specification, so a wrong argument fails before any model call with a message that says what to pass.
 */
export function checkModel(model: unknown): asserts model is AiSdkLanguageModel {
  if (typeof model === 'string') {
    throw new ConfigError(
      `aiSdkProvider: got the string '${model}'; pass a language model object, e.g. openai('gpt-4o-mini') from @ai-sdk/openai`,
    );
  }
  if (model === null || typeof model !== 'object') {
    throw new ConfigError(`aiSdkProvider: expected an AI SDK language model, got ${model === null ? 'null' : typeof model}`);
  }
  const record = model as Record<string, unknown>;
  const version = record['specificationVersion'];
  if (typeof version !== 'string' || !SUPPORTED.includes(version)) {
    throw new ConfigError(
      `aiSdkProvider: the model implements specification ${typeof version === 'string' ? version : '(none)'}; ` +
        `troupe speaks v2 (AI SDK 5: @ai-sdk/* 2.x) and v3 (AI SDK 6: @ai-sdk/* 3.x)` +
        (version === 'v4' ? ', which run on Node 20; v4 (AI SDK 7) packages need Node 22 and are not supported yet' : ''),
    );
  }
  for (const method of ['doGenerate', 'doStream'] as const) {
    if (typeof record[method] !== 'function') throw new ConfigError(`aiSdkProvider: the model has no ${method}() method`);
  }
  for (const field of ['provider', 'modelId'] as const) {
    if (typeof record[field] !== 'string' || record[field] === '') throw new ConfigError(`aiSdkProvider: the model has no ${field}`);
  }
}
