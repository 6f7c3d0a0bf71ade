import { APIError } from '@anthropic-ai/sdk';
import type { RawContentBlockDelta, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { ResponseAssembler } from '../response-assembler.js';
import type { StreamEvent } from '../types.js';
import { finishOf, usageOf, type WireUsage } from './map-response.js';
import type { ThinkingBlock, ThinkingMemory } from './thinking-memory.js';

/** What one content block of the stream is, by its `index`. */
type BlockState =
  | { kind: 'text' | 'other' }
  | { kind: 'thinking'; thinking: string; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; call: number; startInput: unknown; streamed: boolean };

/**
 * The HTTP status Anthropic's error table gives each `error.type`, for an `error` event that
 * arrives after the 200 (e.g. `overloaded_error` mid-stream): it is classified like the same error
 * answered up front. An unknown type counts as a server error.
 */
const STATUS_OF_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** An `error` event in the middle of a stream, with the status its type stands for. */
export class StreamErrorEvent extends Error {
  readonly status: number;
  readonly type: string;

  constructor(type: string, detail: string, options?: { cause?: unknown }) {
    super(`error event mid-stream (${type}): ${detail}`, options);
    this.name = 'StreamErrorEvent';
    this.type = type;
    this.status = STATUS_OF_TYPE[type] ?? 500;
  }
}

/** A stream that ended before `message_stop`: classified as a network failure (retryable). */
export class StreamCutError extends Error {
  readonly code = 'ERR_STREAM_PREMATURE_CLOSE';

  constructor() {
    super('the stream ended before message_stop (premature close)');
    this.name = 'StreamCutError';
  }
}

/**
 * Decodes the Messages API's raw stream events into troupe stream events: `text_delta` → `text`,
 * `thinking_delta` → `reasoning`, `input_json_delta` → `tool_call_delta` (call index = order of
 * the `tool_use` blocks, whatever their block index; pieces of parallel calls may interleave),
 * then one `finish` at `message_stop`. `ping` is dropped by the client; unknown events are ignored.
 */
export async function* decodeStream(
  events: AsyncIterable<RawMessageStreamEvent>,
  context: { stop: readonly string[] | undefined; memory: ThinkingMemory },
): AsyncGenerator<StreamEvent> {
  const assembler = new ResponseAssembler();
  const blocks: BlockState[] = [];
  let calls = 0;
  let usage: WireUsage = {};
  let stopReason: string | null = null;
  let stopSequence: string | null = null;
  try {
    for await (const event of events) {
      switch (event.type) {
        case 'message_start':
          usage = { ...event.message.usage };
          break;
        case 'content_block_start': {
          const block = event.content_block;
          if (block.type === 'text') {
            blocks[event.index] = { kind: 'text' };
            const piece = assembler.text(block.text ?? '');
            if (piece !== undefined) yield piece;
          } else if (block.type === 'thinking') {
            blocks[event.index] = { kind: 'thinking', thinking: block.thinking ?? '', signature: block.signature ?? '' };
            const piece = assembler.reasoning(block.thinking ?? '');
            if (piece !== undefined) yield piece;
          } else if (block.type === 'redacted_thinking') {
            blocks[event.index] = { kind: 'redacted', data: block.data };
          } else if (block.type === 'tool_use') {
            const call = calls++;
            blocks[event.index] = { kind: 'tool', call, startInput: block.input, streamed: false };
            yield assembler.toolCall(call, { id: block.id, name: block.name });
          } else {
            // Server-tool blocks and the like: troupe offers no server tools, nothing to show.
            blocks[event.index] = { kind: 'other' };
          }
          break;
        }
        case 'content_block_delta': {
          const piece = delta(event.index, event.delta);
          if (piece !== undefined) yield piece;
          break;
        }
        case 'content_block_stop': {
          const block = blocks[event.index];
          // A server that sends the whole input in the start event and no deltas: pass it on whole.
          if (block?.kind === 'tool' && !block.streamed && hasKeys(block.startInput)) {
            yield assembler.toolCall(block.call, { argumentsDelta: JSON.stringify(block.startInput) });
          }
          break;
        }
        case 'message_delta':
          stopReason = event.delta.stop_reason ?? stopReason;
          stopSequence = event.delta.stop_sequence ?? stopSequence;
          usage = mergeUsage(usage, event.usage);
          break;
        case 'message_stop': {
          const finish = finishOf(stopReason, stopSequence, context.stop);
          assembler.setUsage(usageOf(usage));
          const done = assembler.finish(finish.finishReason, finish.stopSequence);
          const firstCall = done.response.toolCalls?.[0];
          if (firstCall !== undefined) context.memory.remember(firstCall.id, thinkingOf(blocks));
          yield done;
          return;
        }
      }
    }
  } catch (thrown) {
    throw streamFailure(thrown);
  }
  // No `message_stop`: the connection was cut, or the request aborted (the client then ends the
  // iteration quietly). Either way the answer is incomplete and must not pass for a short one.
  throw new StreamCutError();

  function delta(index: number, piece: RawContentBlockDelta): StreamEvent | undefined {
    const block = blocks[index];
    switch (piece.type) {
      case 'text_delta':
        return assembler.text(piece.text);
      case 'thinking_delta':
        if (block?.kind === 'thinking') block.thinking += piece.thinking;
        return assembler.reasoning(piece.thinking);
      case 'signature_delta':
        if (block?.kind === 'thinking') block.signature = piece.signature;
        return undefined;
      case 'input_json_delta':
        if (block?.kind !== 'tool') return undefined;
        block.streamed = true;
        // Raw JSON text exactly as the model wrote it: broken JSON passes through for troupe to report.
        return assembler.toolCall(block.call, { argumentsDelta: piece.partial_json });
      default:
        // citations_delta and anything newer: nothing troupe shows.
        return undefined;
    }
  }
}

/** `message_delta` usage is cumulative; its nulls mean "unchanged". */
function mergeUsage(base: WireUsage, update: WireUsage | null | undefined): WireUsage {
  const merged: WireUsage = { ...base };
  if (update === null || update === undefined) return merged;
  for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
    const value = update[key];
    if (value !== null && value !== undefined) merged[key] = value;
  }
  return merged;
}

function thinkingOf(blocks: readonly (BlockState | undefined)[]): ThinkingBlock[] {
  const out: ThinkingBlock[] = [];
  for (const block of blocks) {
    if (block?.kind === 'thinking') out.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else if (block?.kind === 'redacted') out.push({ type: 'redacted_thinking', data: block.data });
  }
  return out;
}

function hasKeys(value: unknown): boolean {
  return value !== null && typeof value === 'object' && Object.keys(value).length > 0;
}

/** The client throws an `error` event as an APIError without a status: give it the status its type stands for. */
function streamFailure(thrown: unknown): unknown {
  if (thrown instanceof APIError && thrown.status === undefined && typeof thrown.type === 'string') {
    return new StreamErrorEvent(thrown.type, thrown.apiMessage ?? thrown.message, { cause: thrown });
  }
  return thrown;
}
