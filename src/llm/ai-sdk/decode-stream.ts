import type { LanguageModelV2StreamPart, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { ProviderError } from '../provider-error.js';
import { ResponseAssembler } from '../response-assembler.js';
import type { ModelRequest, StreamEvent } from '../types.js';
import { aiSdkFailure, streamFailure } from './ai-sdk-failure.js';
import { finishOf, usageOf } from './finish-reason.js';

/** A part of a v2 or v3 model's stream: the two name their parts alike. */
export type StreamPart = LanguageModelV2StreamPart | LanguageModelV3StreamPart;

type FinishPart = Extract<StreamPart, { type: 'finish' }>;

/** What the decoder needs besides the stream. */
export type DecodeContext = {
  provider: string;
  request: ModelRequest;
  /** The request's signal as the model saw it (the silence timer's, or the caller's abort). */
  signal: AbortSignal;
};

/**
 * Turns a model's `doStream` parts into troupe StreamEvents: `text-delta` → `text`,
 * `reasoning-delta` → `reasoning`, `tool-input-start`/`-delta` → `tool_call_delta` (parallel
 * calls told apart by their id), a `tool-call` that was never streamed → one whole delta, then one
 * `finish` built from it all. A `tool-call` is the specification's final word on a call's input,
 * so the response carries it even where the deltas said otherwise.
 *
 * A stream must carry its `finish` part: one that ends without it was cut and fails as a
 * retryable `network` error; an `error` part fails the attempt (see `streamFailure`). The signal
 * cancels the stream, so a model that ignores its abort signal still stops.
 */
export async function* decodeStream(stream: ReadableStream<StreamPart>, context: DecodeContext): AsyncGenerator<StreamEvent> {
  const { provider, signal } = context;
  const reader = stream.getReader();
  const cancel = (): void => void reader.cancel(signal.reason).catch(() => undefined);
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', cancel, { once: true });
  const assembler = new ResponseAssembler();
  const calls = new Map<string, { index: number; textInput: boolean }>();
  const inputs = new Map<string, string>();
  // Calls the provider runs itself (its own web search…): troupe offers none, and runs none.
  const providerRun = new Set<string>();
  let finish: FinishPart | undefined;
  let ended = false;
  try {
    for (;;) {
      let step: Awaited<ReturnType<typeof reader.read>>;
      try {
        step = await reader.read();
      } catch (thrown) {
        throw aiSdkFailure(thrown, provider, signal);
      }
      if (step.done) {
        ended = true;
        break;
      }
      const part = step.value;
      switch (part.type) {
        case 'text-delta': {
          const event = assembler.text(part.delta);
          if (event !== undefined) yield event;
          break;
        }
        case 'reasoning-delta': {
          const event = assembler.reasoning(part.delta);
          if (event !== undefined) yield event;
          break;
        }
        case 'tool-input-start': {
          if (part.providerExecuted === true) {
            providerRun.add(part.id);
            break;
          }
          const index = calls.size;
          // `text` input (v3) streams a raw string, not JSON: only the final `tool-call` says the input.
          calls.set(part.id, { index, textInput: 'inputEncoding' in part && part.inputEncoding === 'text' });
          yield assembler.toolCall(index, { id: part.id, name: part.toolName });
          break;
        }
        case 'tool-input-delta': {
          const call = calls.get(part.id);
          if (call !== undefined && !call.textInput && part.delta !== '') yield assembler.toolCall(call.index, { argumentsDelta: part.delta });
          break;
        }
        case 'tool-call': {
          if (part.providerExecuted === true || providerRun.has(part.toolCallId)) break;
          const call = calls.get(part.toolCallId);
          if (call !== undefined) {
            inputs.set(part.toolCallId, part.input);
            break;
          }
          // Providers that do not stream a call's input send it whole.
          const index = calls.size;
          calls.set(part.toolCallId, { index, textInput: false });
          yield assembler.wholeCall(index, { id: part.toolCallId, name: part.toolName, arguments: part.input });
          break;
        }
        case 'finish':
          finish = part;
          break;
        case 'error':
          throw streamFailure(part.error, provider, signal);
        // stream-start, response-metadata, text/reasoning start and end, tool-input-end, sources,
        // files, provider-run tool results, raw chunks: nothing troupe shows or runs.
      }
    }
  } finally {
    signal.removeEventListener('abort', cancel);
    // Stopped early (`</ACTION>` closed, or a failure): release the model's connection.
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  // Cancelled by the signal, the stream just ends: report the abort (or the silence timer).
  if (signal.aborted) throw signal.reason ?? new Error('the request was aborted');
  if (finish === undefined) {
    throw new ProviderError('network', `${provider}: the stream ended before the model finished (connection cut)`, { retryable: true });
  }
  const built = assembler.finish('stop').response;
  if (built.toolCalls !== undefined) {
    built.toolCalls = built.toolCalls.map((call) => {
      const input = inputs.get(call.id);
      return input === undefined ? call : { ...call, arguments: input === '' ? '{}' : input };
    });
  }
  const usage = usageOf(finish.usage);
  const ending = finishOf(finish.finishReason, {
    text: built.text,
    hasCalls: (built.toolCalls?.length ?? 0) > 0,
    stop: context.request.stop,
    providerMetadata: finish.providerMetadata,
  });
  const response = { ...built, ...ending };
  if (usage === undefined) delete response.usage;
  else response.usage = usage;
  yield { type: 'finish', response };
}
