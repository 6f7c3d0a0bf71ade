/**
 * Chat Completions wire transcripts, written from OpenAI's API reference (the chat completion
 * object, the chunk object, streaming with `stream_options.include_usage`) and from what
 * OpenAI-compatible servers add: `reasoning_content` (vLLM, DeepSeek, llama.cpp) and `reasoning`
 * (Ollama, OpenRouter) deltas, parallel calls whose argument deltas interleave by index.
 */
import type { SseEvent } from '../wire-server.js';

export const MODEL = 'gpt-4o-mini-2024-07-18';
const ID = 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG';
const CREATED = 1741570283;
const FINGERPRINT = 'fp_06737a9306';

export const CALL_A = 'call_Wj3Wb1Z3YBQ7r6Lh9kGJ5cN2';
export const CALL_B = 'call_q4MOmw8dYdN9S1dWq1ZAQp3e';

type WireUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

/** OpenAI's usage object, with the detail blocks it sends. */
export function usage(prompt: number, completion: number, reasoning = 0): WireUsage & Record<string, unknown> {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

type WireCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

/** A whole `chat.completion` object (the non-streaming answer). */
export function completion(
  message: { content?: string | null; refusal?: string | null; tool_calls?: WireCall[]; function_call?: { name: string; arguments: string }; reasoning_content?: string },
  finishReason: string,
  /** `null`: a server that sends no usage. */
  tokens: WireUsage | null = usage(82, 17),
): Record<string, unknown> {
  return {
    id: ID,
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, refusal: null, annotations: [], ...message },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    ...(tokens !== null && { usage: tokens }),
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
}

export function call(id: string, name: string, args: string): WireCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

/** One `chat.completion.chunk` as the `data:` of an SSE event. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return JSON.stringify({
    id: ID,
    object: 'chat.completion.chunk',
    created: CREATED,
    model: MODEL,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  });
}

/** The last chunk with include_usage: no choices, only the counts. */
export function usageChunk(tokens: WireUsage): string {
  return JSON.stringify({
    id: ID,
    object: 'chat.completion.chunk',
    created: CREATED,
    model: MODEL,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
    choices: [],
    usage: tokens,
  });
}

const ROLE = chunk({ role: 'assistant', content: '', refusal: null });

/** A streamed text answer: role, content pieces, finish_reason, usage, `[DONE]`. */
export function textStream(pieces: readonly string[], finishReason = 'stop', tokens: WireUsage = usage(82, 17)): SseEvent[] {
  return [ROLE, ...pieces.map((content) => chunk({ content })), chunk({}, finishReason), usageChunk(tokens), '[DONE]'];
}

export const PLAIN_TEXT = 'Player 7 is Ana, a left-handed striker.';
export const PLAIN_PIECES = ['Player', ' 7', ' is', ' Ana', ',', ' a', ' left', '-handed', ' striker', '.'];

/** The XML protocol's answer, stopped at `</ACTION>` (OpenAI strips the stop sequence and says only `stop`). */
export const ACTION_TEXT = 'I will look that up.\n<ACTION>\n<lookup_player>\n<id>7</id>\n</lookup_player>\n';
export const ACTION_PIECES = ['I will', ' look that up', '.\n', '<ACTION', '>\n<', 'lookup', '_player', '>\n<id', '>7</', 'id>\n</', 'lookup_player', '>\n'];

/** One native call, streamed: the first piece names it, the rest are argument fragments. */
export const SINGLE_CALL_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: CALL_A, type: 'function', function: { name: 'lookup_player', arguments: '' } }], refusal: null }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: 'id' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '":"' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '7' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] }),
  chunk({}, 'tool_calls'),
  usageChunk(usage(96, 18)),
  '[DONE]',
];

/** Two parallel calls whose argument deltas interleave across indexes (vLLM and proxies do this). */
export const PARALLEL_CALLS_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: null, refusal: null }),
  chunk({ tool_calls: [{ index: 0, id: CALL_A, type: 'function', function: { name: 'lookup_player', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 1, id: CALL_B, type: 'function', function: { name: 'lookup_team', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"id"' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '{"team"' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: ': "Rovers"}' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: ': "7"}' } }] }),
  chunk({}, 'tool_calls'),
  usageChunk(usage(101, 42)),
  '[DONE]',
];

/** vLLM / DeepSeek / llama.cpp: the thinking arrives as `reasoning_content` before the content. */
export const REASONING_CONTENT_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ reasoning_content: 'The user asks about player 7.' }),
  chunk({ reasoning_content: ' The roster says Ana.' }),
  chunk({ content: 'Player 7 ' }),
  chunk({ content: 'is Ana.' }),
  chunk({}, 'stop'),
  usageChunk(usage(40, 31, 19)),
  '[DONE]',
];

/** Ollama / OpenRouter: the same, in `reasoning`; vLLM while renaming sends both fields at once. */
export const REASONING_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: '', reasoning: 'Player 7…' }),
  chunk({ content: '', reasoning: ' is Ana.', reasoning_content: ' is Ana.' }),
  chunk({ content: 'Ana.' }),
  chunk({}, 'stop'),
  usageChunk(usage(40, 12, 8)),
  '[DONE]',
];

export const REFUSAL_TEXT = "I'm sorry, I can't help with that.";

export const REFUSAL_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: null, refusal: '' }),
  chunk({ refusal: "I'm sorry, " }),
  chunk({ refusal: "I can't help with that." }),
  chunk({}, 'stop'),
  usageChunk(usage(55, 10)),
  '[DONE]',
];

/** Native call arguments cut short by the model: broken JSON, to be passed through untouched. */
export const BROKEN_ARGUMENTS = '{"id": "7", "fields": ["name"';

export const BROKEN_CALL_STREAM: SseEvent[] = [
  chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: CALL_A, type: 'function', function: { name: 'lookup_player', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"id": "7", ' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"fields": ["name"' } }] }),
  chunk({}, 'tool_calls'),
  usageChunk(usage(96, 14)),
  '[DONE]',
];

/** OpenAI's error bodies. */
export const RATE_LIMITED = {
  error: {
    message: 'Rate limit reached for gpt-4o-mini in organization org-Zx8Q on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 2s.',
    type: 'requests',
    param: null,
    code: 'rate_limit_exceeded',
  },
};

export const SERVER_ERROR = {
  error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
};

/** A 401 echoes a masked form of the refused key. */
export function invalidKey(masked: string): unknown {
  return {
    error: {
      message: `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  };
}
