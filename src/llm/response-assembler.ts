import type { FinishReason, ModelResponse, NativeToolCall, StreamEvent, Usage } from './types.js';

type PartialCall = { id: string; name: string; arguments: string };

/**
 * Builds the final ModelResponse of a stream from its pieces, and hands back the matching
 * StreamEvent for each piece: adapters feed it what the wire says and yield what it returns, so
 * every adapter streams and finishes the same way.
 */
export class ResponseAssembler {
  private readonly parts: string[] = [];
  private readonly calls: PartialCall[] = [];
  private usage: Usage | undefined;

  /** Visible text. */
  text(text: string): StreamEvent | undefined {
    if (text === '') return undefined;
    this.parts.push(text);
    return { type: 'text', text };
  }

  /** Reasoning text: streamed for the UI, never part of the reply. */
  reasoning(text: string): StreamEvent | undefined {
    return text === '' ? undefined : { type: 'reasoning', text };
  }

  /** A piece of native call number `index`: its id and name arrive once, its arguments in pieces. */
  toolCall(index: number, piece: { id?: string | undefined; name?: string | undefined; argumentsDelta?: string | undefined }): StreamEvent {
    const call = (this.calls[index] ??= { id: '', name: '', arguments: '' });
    if (piece.id) call.id = piece.id;
    if (piece.name && call.name === '') call.name = piece.name;
    const argumentsDelta = piece.argumentsDelta ?? '';
    call.arguments += argumentsDelta;
    const event: StreamEvent = { type: 'tool_call_delta', index, argumentsDelta };
    if (piece.id) event.id = piece.id;
    if (piece.name) event.name = piece.name;
    return event;
  }

  /** A whole native call at once (providers that do not stream arguments). */
  wholeCall(index: number, call: { id?: string | undefined; name: string; arguments: string }): StreamEvent {
    return this.toolCall(index, { id: call.id, name: call.name, argumentsDelta: call.arguments });
  }

  setUsage(usage: Usage): void {
    this.usage = usage;
  }

  /** The response so far, ended with `finishReason`. */
  finish(finishReason: FinishReason, stopSequence?: string): StreamEvent & { type: 'finish' } {
    const response: ModelResponse = { text: this.parts.join(''), finishReason };
    const toolCalls = this.calls.filter((call): call is PartialCall => call !== undefined);
    if (toolCalls.length > 0) {
      response.toolCalls = toolCalls.map((call, index): NativeToolCall => ({
        id: call.id || `call_${index + 1}`,
        name: call.name,
        arguments: call.arguments === '' ? '{}' : call.arguments,
      }));
    }
    if (stopSequence !== undefined) response.stopSequence = stopSequence;
    if (this.usage !== undefined) response.usage = this.usage;
    return { type: 'finish', response };
  }
}

/** Drains a stream into its final response (what `complete` returns for a streaming-only source). */
export async function collectStream(events: AsyncIterable<StreamEvent>): Promise<ModelResponse> {
  let last: ModelResponse | undefined;
  for await (const event of events) if (event.type === 'finish') last = event.response;
  if (last === undefined) throw new Error('the stream ended without a finish event');
  return last;
}
