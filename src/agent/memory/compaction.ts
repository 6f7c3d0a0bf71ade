import { ConfigError } from '../../errors.js';
import type { ChatMessage, ModelResponse, Provider } from '../../llm/types.js';

/** One run's worth of kept history (one `agent.run`, or one scene turn), with its token count. */
export type MemoryTurn = {
  readonly messages: readonly ChatMessage[];
  readonly tokens: number;
  /** This turn is a summary of earlier turns, written by a compaction policy. */
  readonly summary?: boolean;
};

/** What a compaction policy is given when the kept history exceeds its budget. */
export type CompactionRequest = {
  /** The kept turns, oldest first; the last one is the run that just ended. */
  turns: readonly MemoryTurn[];
  /** Their total tokens, and the budget they exceed. */
  tokens: number;
  maxTokens: number;
  /** The agent's token counter over messages, for policies that measure what they write. */
  countTokens(messages: readonly ChatMessage[]): number;
  agent: string;
  /** Aborted when the agent closes, or when `memory.clear()` discards this compaction. */
  signal: AbortSignal;
  /**
   * One model call on the agent's account: refused (it throws) once the signal is aborted or a
   * budget of the agent has no model call left; else it spends one model call and the reply's
   * tokens from the agent's budgets, and is aborted with the signal.
   */
  complete(provider: Provider, messages: ChatMessage[], options?: { maxTokens?: number }): Promise<ModelResponse>;
};

/**
 * What a policy returns: the turns to keep instead, oldest first. A turn given back unchanged keeps
 * its count; a new one (a summary) is counted. `dropped` and `summarized` (turns) are reported on
 * `memory.compacted`. If the result still exceeds the budget, the oldest turns are dropped after it.
 */
export type CompactionResult = {
  turns: readonly (MemoryTurn | { messages: readonly ChatMessage[]; summary?: boolean })[];
  dropped: number;
  summarized: number;
};

/** How an agent's history is brought back under its token budget. */
export type CompactionPolicy = {
  /** Named on `memory.compacted`. */
  readonly name: string;
  compact(request: CompactionRequest): CompactionResult | Promise<CompactionResult>;
};

/**
 * The default policy: drops whole turns, oldest first, until the history fits. A turn that alone
 * exceeds the budget is dropped too, so the budget always holds.
 */
export function dropOldest(): CompactionPolicy {
  return DROP_OLDEST;
}

const DROP_OLDEST: CompactionPolicy = Object.freeze({
  name: 'drop-oldest',
  compact({ turns, tokens, maxTokens }: CompactionRequest): CompactionResult {
    let total = tokens;
    let dropped = 0;
    while (dropped < turns.length && total > maxTokens) total -= turns[dropped++]!.tokens;
    return { turns: turns.slice(dropped), dropped, summarized: 0 };
  },
});

/** Writes the summary of older turns: a function of the transcript, or a model. */
export type Summarizer =
  | ((messages: readonly ChatMessage[], request: CompactionRequest) => string | Promise<string>)
  | Provider;

/** The options of `summarizeOldest`. */
export type SummarizeOptions = {
  summarize: Summarizer;
  /** The most recent turns kept as they are (default 1). */
  keepRecent?: number;
  /** Instructions for a model summarizer (default: a short factual summary). */
  instructions?: string;
};

const SUMMARY_INSTRUCTIONS =
  'Summarize the conversation below for the assistant who had it, so it can go on without the transcript. ' +
  'Keep facts, decisions, open tasks, names and variable references ($r1, …). Write plain prose, at most a few short paragraphs.';

const SUMMARY_HEAD = 'Summary of the earlier conversation (written by the runtime):';

/**
 * A policy that replaces every turn but the most recent `keepRecent` by one summary turn (an
 * earlier summary is folded into the new one). The summary comes from your function or from one
 * call to a provider; it is kept as a system message, which every adapter accepts anywhere. A
 * provider's call is the agent's (`request.complete`): charged to its budgets, aborted when it
 * closes or when `memory.clear()` discards the compaction.
 *
 * @example
 * memory: { maxTokens: 4_000, compaction: summarizeOldest({ summarize: cheapModel, keepRecent: 2 }) }
 */
export function summarizeOldest(options: SummarizeOptions): CompactionPolicy {
  const { summarize } = options;
  const isProvider = typeof summarize === 'object' && summarize !== null && typeof summarize.complete === 'function';
  if (typeof summarize !== 'function' && !isProvider) {
    throw new ConfigError('summarizeOldest: `summarize` must be a function of the messages or a provider');
  }
  const keepRecent = options.keepRecent ?? 1;
  if (!Number.isSafeInteger(keepRecent) || keepRecent < 0) {
    throw new ConfigError(`summarizeOldest: keepRecent must be an integer ≥ 0, got ${String(keepRecent)}`);
  }
  const instructions = options.instructions ?? SUMMARY_INSTRUCTIONS;
  return Object.freeze({
    name: 'summarize-oldest',
    async compact(request: CompactionRequest): Promise<CompactionResult> {
      const { turns } = request;
      const split = Math.max(0, turns.length - keepRecent);
      const older = turns.slice(0, split);
      if (older.length === 0) return { turns, dropped: 0, summarized: 0 };
      const transcript = older.flatMap((turn) => turn.messages);
      const text =
        typeof summarize === 'function'
          ? await summarize(transcript, request)
          : // Through the request: the call is charged to the agent's budgets and stops when it closes.
            (await request.complete(summarize, [
              { role: 'system', content: instructions },
              { role: 'user', content: transcriptText(transcript) },
            ])).text;
      if (typeof text !== 'string') throw new TypeError(`the summarizer returned ${typeof text} instead of text`);
      const summary = { messages: [{ role: 'system', content: `${SUMMARY_HEAD}\n${text.trim()}` } as const], summary: true };
      return { turns: [summary, ...turns.slice(split)], dropped: 0, summarized: older.filter((turn) => turn.summary !== true).length };
    },
  });
}

/** Messages as plain text for a summarizing model. */
export function transcriptText(messages: readonly ChatMessage[]): string {
  return messages
    .map((message) => {
      if (message.role === 'tool') return `tool ${message.name}: ${message.content}`;
      const calls = message.role === 'assistant' && message.toolCalls?.length ? ` [calls: ${message.toolCalls.map((call) => `${call.name}(${call.arguments})`).join(', ')}]` : '';
      return `${message.role}: ${message.content}${calls}`;
    })
    .join('\n\n');
}
