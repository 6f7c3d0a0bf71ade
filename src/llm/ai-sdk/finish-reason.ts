import type {
  LanguageModelV2FinishReason,
  LanguageModelV2Usage,
  LanguageModelV3FinishReason,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from '@ai-sdk/provider';
import { parseOutput } from '../../protocol/parse-output.js';
import type { FinishReason, Usage } from '../types.js';

/** What ended the turn, in troupe's terms. */
export type Finish = { finishReason: FinishReason; stopSequence?: string };

/** What the mapping needs besides the model's reason. */
export type FinishFacts = {
  text: string;
  hasCalls: boolean;
  /** The stop sequences the request asked for. */
  stop: readonly string[] | undefined;
  providerMetadata: SharedV3ProviderMetadata | undefined;
};

const ACTION_CLOSER = '</ACTION>';

/**
 * Maps the model's finish reason (v2: a string; v3: `{ unified, raw }`) to troupe's. The
 * specification's `stop` covers both a natural end and a stop sequence and never says which
 * sequence fired, so: the raw `stop_sequence` (Anthropic) names it through the provider's metadata
 * or the one sequence asked for; otherwise an `<ACTION>` left open at a stop, when `</ACTION>`
 * was asked for, is that sequence, stripped by the provider (the parser accepts a stripped closer
 * when the reply says so), as the OpenAI and Gemini adapters report it. `other` and v2's
 * `unknown` end the turn like `stop`, keeping the text.
 */
export function finishOf(reason: LanguageModelV2FinishReason | LanguageModelV3FinishReason | undefined, facts: FinishFacts): Finish {
  const unified = typeof reason === 'object' && reason !== null ? reason.unified : reason;
  const raw = typeof reason === 'object' && reason !== null ? reason.raw : undefined;
  switch (unified) {
    case 'length':
      return { finishReason: 'length' };
    case 'content-filter':
      // Anthropic's `refusal` is a content filter to the AI SDK; troupe keeps the difference.
      return { finishReason: raw === 'refusal' ? 'refusal' : 'content_filter' };
    case 'tool-calls':
      return { finishReason: 'tool_calls' };
    case 'error':
      return { finishReason: 'error' };
  }
  // Some models end a turn of native calls with `stop`.
  if (facts.hasCalls) return { finishReason: 'tool_calls' };
  if (raw === 'stop_sequence') {
    const sequence = namedSequence(facts.providerMetadata) ?? (facts.stop?.length === 1 ? facts.stop[0] : undefined);
    return sequence === undefined ? { finishReason: 'stop_sequence' } : { finishReason: 'stop_sequence', stopSequence: sequence };
  }
  if (facts.stop?.includes(ACTION_CLOSER) && parseOutput(facts.text).problem?.category === 'unclosed_action') {
    return { finishReason: 'stop_sequence', stopSequence: ACTION_CLOSER };
  }
  return { finishReason: 'stop' };
}

/** The sequence a provider says fired, in its metadata (`{ anthropic: { stopSequence } }`). */
function namedSequence(metadata: SharedV3ProviderMetadata | undefined): string | undefined {
  for (const entry of Object.values(metadata ?? {})) {
    const sequence = (entry as Record<string, unknown> | null)?.['stopSequence'];
    if (typeof sequence === 'string' && sequence !== '') return sequence;
  }
  return undefined;
}

/**
 * Token counts as troupe reports them. v2 gives flat counts, v3 nests them (`inputTokens.total`…);
 * any count may be undefined. A missing total is the sum of what is known; a model that reports
 * no count at all reports no usage (rather than a made-up zero).
 */
export function usageOf(usage: LanguageModelV2Usage | LanguageModelV3Usage | undefined): Usage | undefined {
  if (usage === undefined || usage === null) return undefined;
  const counts = typeof usage.inputTokens === 'object' || typeof usage.outputTokens === 'object' ? v3Counts(usage as LanguageModelV3Usage) : v2Counts(usage as LanguageModelV2Usage);
  if (counts.input === undefined && counts.output === undefined && counts.total === undefined) return undefined;
  const inputTokens = counts.input ?? 0;
  const outputTokens = counts.output ?? 0;
  return { inputTokens, outputTokens, totalTokens: counts.total ?? inputTokens + outputTokens };
}

type Counts = { input: number | undefined; output: number | undefined; total: number | undefined };

function v2Counts(usage: LanguageModelV2Usage): Counts {
  return { input: count(usage.inputTokens), output: count(usage.outputTokens), total: count(usage.totalTokens) };
}

function v3Counts(usage: LanguageModelV3Usage): Counts {
  const input = usage.inputTokens ?? {};
  const output = usage.outputTokens ?? {};
  return {
    // The total, else its parts (uncached, cache reads and writes): all are billed as input.
    input: count(input.total) ?? sum(count(input.noCache), count(input.cacheRead), count(input.cacheWrite)),
    output: count(output.total) ?? sum(count(output.text), count(output.reasoning)),
    total: undefined,
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function sum(...values: (number | undefined)[]): number | undefined {
  const known = values.filter((value): value is number => value !== undefined);
  return known.length === 0 ? undefined : known.reduce((total, value) => total + value, 0);
}
