import type { CompletionUsage } from 'openai/resources/completions';
import type { FinishReason, Usage } from '../types.js';

/** The wire's finish_reason: OpenAI's five, or whatever another compatible server sends. */
export type WireFinishReason = string | null | undefined;

/** What ended the turn, in troupe's terms. */
export type Finish = { finishReason: FinishReason; stopSequence?: string };

/** What the mapping needs to know about the turn besides the wire's reason. */
export type FinishFacts = {
  text: string;
  hasCalls: boolean;
  refused: boolean;
  /** The stop sequences actually sent (none for a reasoning model, which refuses them). */
  stopSent: readonly string[] | undefined;
};

const CLOSER = '</ACTION>';

/**
 * Maps finish_reason to troupe's FinishReason. `stop` never says which stop sequence fired, so a
 * stop with `</ACTION>` among the sequences sent and an `<ACTION>` opener left open in the text is
 * reported as `stop_sequence` `</ACTION>` (docs/protocol.md rule 5: the server stripped the closer).
 */
export function finishOf(reason: WireFinishReason, facts: FinishFacts): Finish {
  if (facts.refused) return { finishReason: 'refusal' };
  switch (reason) {
    case 'length':
      return { finishReason: 'length' };
    case 'content_filter':
      return { finishReason: 'content_filter' };
    // `function_call` is the legacy name, still sent by some compatible servers.
    case 'tool_calls':
    case 'function_call':
      return { finishReason: 'tool_calls' };
  }
  // Some servers (older Ollama and llama.cpp builds) end a turn of native calls with `stop`.
  if (facts.hasCalls) return { finishReason: 'tool_calls' };
  if (closerWasStripped(facts)) return { finishReason: 'stop_sequence', stopSequence: CLOSER };
  // `stop`, and the odd non-standard reason (`eos`, `end_turn`): the model ended its turn.
  return { finishReason: 'stop' };
}

function closerWasStripped(facts: FinishFacts): boolean {
  if (!facts.stopSent?.some((sequence) => sequence.trim().toLowerCase() === CLOSER.toLowerCase())) return false;
  const lower = facts.text.toLowerCase();
  const opener = Math.max(lower.lastIndexOf('<action>'), lower.lastIndexOf('<action '));
  return opener >= 0 && lower.indexOf('</action', opener) < 0;
}

/** Token counts as troupe reports them; servers that leave out `total_tokens` get the sum. */
export function usageOf(usage: Partial<CompletionUsage> | null | undefined): Usage | undefined {
  if (usage === null || usage === undefined) return undefined;
  const inputTokens = usage.prompt_tokens ?? 0;
  const outputTokens = usage.completion_tokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage.total_tokens ?? inputTokens + outputTokens };
}
