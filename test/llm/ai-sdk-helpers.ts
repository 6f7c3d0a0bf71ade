/**
 * Building blocks for tests of `aiSdkProvider`: v3 results and stream parts as AI SDK 6 provider
 * packages produce them, a stream that stalls part-way, and a hand-written v2 model (AI SDK 6's
 * `ai/test` ships only `MockLanguageModelV3`; the v2 model is typed by `@ai-sdk/provider`'s own
 * `LanguageModelV2`, so it is held to the specification by the compiler).
 */
import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV2StreamPart,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { convertArrayToReadableStream } from 'ai/test';
import type { ModelRequest, StreamEvent } from '../../src/llm/types.js';

/** v3 usage with totals only, as most providers report it. */
export function v3Usage(input: number | undefined, output: number | undefined): LanguageModelV3Usage {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

export function reason(unified: LanguageModelV3FinishReason['unified'], raw: string | undefined = unified): LanguageModelV3FinishReason {
  return { unified, raw };
}

/** A whole v3 answer. */
export function generated(
  content: LanguageModelV3GenerateResult['content'],
  finishReason: LanguageModelV3FinishReason = reason('stop'),
  usage: LanguageModelV3Usage = v3Usage(82, 17),
  extra: Partial<LanguageModelV3GenerateResult> = {},
): LanguageModelV3GenerateResult {
  return { content, finishReason, usage, warnings: [], ...extra };
}

/** A v3 stream of the given parts. */
export function streamed(parts: LanguageModelV3StreamPart[]): LanguageModelV3StreamResult {
  return { stream: convertArrayToReadableStream(parts) };
}

/** A streamed text answer as provider packages send it: start, metadata, deltas, text-end, finish. */
export function textParts(pieces: readonly string[], finishReason = reason('stop'), usage = v3Usage(82, 17)): LanguageModelV3StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: 'resp-1', modelId: 'mock-model-id' },
    { type: 'text-start', id: 'txt-0' },
    ...pieces.map((delta): LanguageModelV3StreamPart => ({ type: 'text-delta', id: 'txt-0', delta })),
    { type: 'text-end', id: 'txt-0' },
    { type: 'finish', finishReason, usage },
  ];
}

/** One native call streamed the way provider packages do: input start, deltas, end, then the whole call. */
export function callParts(id: string, name: string, pieces: readonly string[]): LanguageModelV3StreamPart[] {
  return [
    { type: 'tool-input-start', id, toolName: name },
    ...pieces.map((delta): LanguageModelV3StreamPart => ({ type: 'tool-input-delta', id, delta })),
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName: name, input: pieces.join('') },
  ];
}

/**
 * A stream that sends `parts` and then stalls (its next pull never settles), recording whether it
 * was cancelled: a model whose connection hangs mid-answer, and which ignores its abort signal.
 */
export function stallingStream(parts: LanguageModelV3StreamPart[]): { result: LanguageModelV3StreamResult; cancelled: () => boolean } {
  let sent = 0;
  let cancelled = false;
  const stream = new ReadableStream<LanguageModelV3StreamPart>({
    pull(controller) {
      if (sent < parts.length) {
        controller.enqueue(parts[sent++]!);
        return;
      }
      return new Promise<void>(() => undefined);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { result: { stream }, cancelled: () => cancelled };
}

/** A v2 model (AI SDK 5's specification) answering from fixed results, recording its calls. */
export function v2Model(answers: {
  generate?: Awaited<ReturnType<LanguageModelV2['doGenerate']>>;
  stream?: LanguageModelV2StreamPart[];
}): LanguageModelV2 & { calls: LanguageModelV2CallOptions[] } {
  const calls: LanguageModelV2CallOptions[] = [];
  return {
    specificationVersion: 'v2',
    provider: 'legacy.chat',
    modelId: 'legacy-model',
    supportedUrls: {},
    calls,
    async doGenerate(options) {
      calls.push(options);
      if (answers.generate === undefined) throw new Error('no generate answer');
      return answers.generate;
    },
    async doStream(options) {
      calls.push(options);
      if (answers.stream === undefined) throw new Error('no stream answer');
      return { stream: convertArrayToReadableStream(answers.stream) };
    },
  };
}

export function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [
      { role: 'system', content: 'You are the referee.' },
      { role: 'user', content: 'Who is player 7?' },
    ],
    signal: new AbortController().signal,
    round: 1,
    agent: 'referee',
    ...overrides,
  };
}

export async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const all: StreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

export const lookupPlayer = {
  name: 'lookup_player',
  description: 'Find a player by id.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
};
