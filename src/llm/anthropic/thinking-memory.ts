import type { RedactedThinkingBlockParam, ThinkingBlockParam } from '@anthropic-ai/sdk/resources/messages';

/** A thinking block as the API wants it back: the text with its signature, or the redacted data. */
export type ThinkingBlock = ThinkingBlockParam | RedactedThinkingBlockParam;

/** How many turns' thinking one adapter keeps (a run needs only the latest few). */
const CAPACITY = 256;

/**
 * The thinking blocks of the adapter's recent tool-calling turns, by the id of their first call.
 *
 * With extended thinking, the API wants the assistant turn that made a tool call sent back with
 * its thinking blocks (signature intact) ahead of the `tool_use` blocks. troupe's history keeps
 * only text and calls, so the adapter remembers the blocks here and puts them back when that
 * turn comes round again in a later request. Bounded: the oldest entries go first.
 */
export class ThinkingMemory {
  private readonly entries = new Map<string, readonly ThinkingBlock[]>();

  /** Keeps `blocks` for the turn whose first tool call is `callId`. */
  remember(callId: string, blocks: readonly ThinkingBlock[]): void {
    if (blocks.length === 0) return;
    this.entries.delete(callId);
    this.entries.set(callId, blocks);
    if (this.entries.size > CAPACITY) this.entries.delete(this.entries.keys().next().value!);
  }

  /** The blocks of the turn whose first tool call is `callId`, or none. */
  recall(callId: string | undefined): readonly ThinkingBlock[] {
    return callId === undefined ? [] : (this.entries.get(callId) ?? []);
  }
}
