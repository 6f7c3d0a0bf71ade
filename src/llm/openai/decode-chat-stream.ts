import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { ProviderError } from '../provider-error.js';
import { ResponseAssembler } from '../response-assembler.js';
import type { StreamEvent } from '../types.js';
import { finishOf, usageOf, type WireFinishReason } from './finish-reason.js';

/**
 * A delta as OpenAI-compatible servers send it: OpenAI's fields, plus the reasoning text that
 * vLLM, DeepSeek and llama.cpp put in `reasoning_content` and Ollama and OpenRouter in `reasoning`.
 */
type WireDelta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null; reasoning?: string | null };

/** What the decoder needs besides the chunks. */
export type DecodeContext = {
  provider: string;
  /** The request's signal as the client saw it: an abort ends the client's stream without an error. */
  signal: AbortSignal;
  /** The stop sequences actually sent (for the `</ACTION>` rule). */
  stopSent: readonly string[] | undefined;
};

/**
 * Turns the client's stream of chat completion chunks into troupe StreamEvents: `text` for content
 * (and refusal) deltas, `reasoning` for reasoning deltas, `tool_call_delta` for each piece of a
 * native call (parallel calls interleave by index), then one `finish` built from it all.
 *
 * A stream must carry a `finish_reason` before it ends: one that stops short of it was cut (a
 * proxy or server closed it cleanly mid-answer) and fails as a retryable `network` error.
 */
export async function* decodeChatStream(chunks: AsyncIterable<ChatCompletionChunk>, context: DecodeContext): AsyncGenerator<StreamEvent> {
  const assembler = new ResponseAssembler();
  const calls = new CallIndexes();
  let reason: WireFinishReason;
  let finished = false;
  let refused = false;
  for await (const chunk of chunks) {
    // With include_usage, OpenAI sends the usage last, in a chunk with no choices; some servers
    // put it on the chunk that carries finish_reason instead.
    const usage = usageOf(chunk.usage);
    if (usage !== undefined) assembler.setUsage(usage);
    const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0);
    if (choice === undefined) continue;
    const delta = (choice.delta ?? {}) as WireDelta;
    const reasoning = reasoningOf(delta);
    if (reasoning !== '') yield assembler.reasoning(reasoning)!;
    if (typeof delta.content === 'string' && delta.content !== '') yield assembler.text(delta.content)!;
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      // The refusal is what the model said to the user: shown as text, reported as `refusal`.
      refused = true;
      yield assembler.text(delta.refusal)!;
    }
    for (const [position, piece] of (delta.tool_calls ?? []).entries()) {
      const index = calls.indexOf(piece.index ?? position, piece.id);
      yield assembler.toolCall(index, { id: piece.id, name: piece.function?.name, argumentsDelta: piece.function?.arguments });
    }
    if (delta.function_call) {
      yield assembler.toolCall(0, { name: delta.function_call.name, argumentsDelta: delta.function_call.arguments });
    }
    if (choice.finish_reason) {
      reason = choice.finish_reason;
      finished = true;
    }
  }
  // The client ends its stream quietly when the request is aborted (our silence timer, or the
  // caller): rethrow, so the adapter kit reports `timeout` or `aborted` instead of a short answer.
  if (context.signal.aborted) throw abortReason(context.signal);
  if (!finished) {
    throw new ProviderError('network', `${context.provider}: the stream ended before the model finished (connection cut)`, { retryable: true });
  }
  const last = assembler.finish('stop');
  const { text, toolCalls } = last.response;
  const finish = finishOf(reason, { text, hasCalls: (toolCalls?.length ?? 0) > 0, refused, stopSent: context.stopSent });
  yield { type: 'finish', response: { ...last.response, ...finish } };
}

/**
 * One delta field per chunk: vLLM sends `reasoning` and `reasoning_content` with the same text
 * while it renames the field, and both must not be shown twice.
 */
function reasoningOf(delta: WireDelta): string {
  if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') return delta.reasoning_content;
  return typeof delta.reasoning === 'string' ? delta.reasoning : '';
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('the request was aborted');
}

/**
 * Maps the wire's call index to troupe's. Normally they are the same; but some servers give every
 * parallel call index 0 and tell them apart only by id, so a new id on a used index opens a call.
 */
class CallIndexes {
  /** The id seen for each troupe index (a hole until its call shows one). */
  private readonly ids: (string | undefined)[] = [];
  private readonly byWire = new Map<number, number>();

  indexOf(wireIndex: number, id: string | undefined): number {
    const index = this.byWire.get(wireIndex);
    if (index === undefined) return this.open(this.taken(wireIndex) ? this.ids.length : wireIndex, wireIndex, id);
    const known = this.ids[index];
    if (id && known !== undefined && known !== id) return this.open(this.ids.length, wireIndex, id);
    if (id && known === undefined) this.ids[index] = id;
    return index;
  }

  private taken(index: number): boolean {
    for (const used of this.byWire.values()) if (used === index) return true;
    return false;
  }

  private open(index: number, wireIndex: number, id: string | undefined): number {
    this.byWire.set(wireIndex, index);
    if (index >= this.ids.length) this.ids.length = index + 1;
    this.ids[index] = id || undefined;
    return index;
  }
}
