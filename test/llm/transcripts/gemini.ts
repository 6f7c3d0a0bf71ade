/**
 * Gemini API wire transcripts, written from Google's API reference (`GenerateContentResponse`,
 * `UsageMetadata`, `PromptFeedback`, `FinishReason`; `:streamGenerateContent?alt=sse`, where
 * each `data:` line is a GenerateContentResponse carrying the new parts and the last one the
 * finish reason and full usage) and its error model (`google.rpc.Status` with `RetryInfo`,
 * `ErrorInfo` and `QuotaFailure` details). The Developer API often sends calls without `id`;
 * Gemini 3 signs calls with `thoughtSignature`.
 */
import type { WireReply } from '../wire-server.js';

export const MODEL = 'gemini-2.5-flash';
const RESPONSE_ID = 'mK9yaPKfJYSv1dkPp4fxwQ4';
export const SIGNATURE = 'CiQB0e2Kb7l1Jm9xq3yN8K4rZ0tGkFQ9Hn2sVw6pLx1cEo5uTgYKXgHR7a';

export type WirePart = Record<string, unknown>;
export type WireUsage = Record<string, unknown>;

/** Gemini's `usageMetadata`; thinking models add `thoughtsTokenCount`. */
export function usage(prompt: number, candidates: number, thoughts = 0): WireUsage {
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    ...(thoughts > 0 && { thoughtsTokenCount: thoughts }),
    totalTokenCount: prompt + candidates + thoughts,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
  };
}

/** One GenerateContentResponse: the whole answer, or one SSE chunk of it. */
export function response(parts: WirePart[], finishReason?: string, tokens?: WireUsage): Record<string, unknown> {
  return {
    candidates: [
      {
        content: { parts, role: 'model' },
        ...(finishReason !== undefined && { finishReason }),
        index: 0,
      },
    ],
    ...(tokens !== undefined && { usageMetadata: tokens }),
    modelVersion: MODEL,
    responseId: RESPONSE_ID,
  };
}

export const text = (value: string): WirePart => ({ text: value });
export const thought = (value: string): WirePart => ({ text: value, thought: true });
export function functionCall(name: string, args: unknown, extra: { id?: string; thoughtSignature?: string } = {}): WirePart {
  return {
    functionCall: { name, args, ...(extra.id !== undefined && { id: extra.id }) },
    ...(extra.thoughtSignature !== undefined && { thoughtSignature: extra.thoughtSignature }),
  };
}

/** The answer to `:generateContent`. */
export function json(body: unknown, status = 200): WireReply {
  return { kind: 'json', status, body };
}

/** The answer to `:streamGenerateContent?alt=sse`: one chunk per event, CRLF line endings as Gemini sends. */
export function sse(chunks: readonly unknown[], extra: { cutAfter?: number; hangAfter?: number } = {}): WireReply {
  return { kind: 'sse', newline: '\r\n', events: chunks.map((chunk) => JSON.stringify(chunk)), ...extra };
}

/** The running usage Gemini puts on every chunk before the last (prompt counted, no candidates yet). */
const running = (prompt: number): WireUsage => ({ promptTokenCount: prompt, totalTokenCount: prompt, promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }] });

// --- streamed answers -------------------------------------------------------------------------

/** Plain text in three chunks. */
export const STREAM_TEXT = [
  response([text('Player 7 is ')], undefined, running(24)),
  response([text('Ana, on the red')], undefined, running(24)),
  response([text(' team.')], 'STOP', usage(24, 9)),
];

/** An `<ACTION>` answer stopped at `</ACTION>`: Gemini strips the sequence and says only STOP. */
export const STREAM_ACTION = [
  response([text('Checking.\n<ACTION><lookup_pla')], undefined, running(130)),
  response([text('yer><player_id>7</player_id></lookup_player>')], undefined, running(130)),
  response([text('\n')], 'STOP', usage(130, 21)),
];

/** Two calls in one turn, in two chunks (Gemini sends each call whole), no ids. */
export const STREAM_PARALLEL = [
  response([text('Checking both.'), functionCall('lookup_player', { player_id: '7' })], undefined, running(88)),
  response([functionCall('lookup_player', { player_id: '9' })], 'STOP', usage(88, 30)),
];

/** Thought summaries (includeThoughts) before the answer. */
export const STREAM_THINKING = [
  response([thought('**Finding the player**\nThe roster says 7 ')], undefined, running(40)),
  response([thought('is Ana.')], undefined, running(40)),
  response([text('Ana.')], 'STOP', usage(40, 2, 57)),
];

/** A prompt Gemini refused to answer: one chunk, no candidates. */
export const BLOCKED = {
  promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
  usageMetadata: { promptTokenCount: 14, totalTokenCount: 14 },
  modelVersion: MODEL,
  responseId: RESPONSE_ID,
};

// --- errors (google.rpc.Status) --------------------------------------------------------------

export const RATE_LIMITED = {
  error: {
    code: 429,
    message:
      'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 12.468245s.',
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
            quotaDimensions: { location: 'global', model: 'gemini-2.5-flash' },
            quotaValue: '10',
          },
        ],
      },
      { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' },
    ],
  },
};

export const INTERNAL = {
  error: {
    code: 500,
    message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
    status: 'INTERNAL',
  },
};

/** Gemini's answer to a bad key: 400, not 401; `ErrorInfo.reason` says what is wrong. */
export const KEY_INVALID = {
  error: {
    code: 400,
    message: 'API key not valid. Please pass a valid API key.',
    status: 'INVALID_ARGUMENT',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
      { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
    ],
  },
};

/** A request Gemini cannot serve: a bad request, not a key problem. */
export const BAD_SCHEMA = {
  error: {
    code: 400,
    message: 'Invalid JSON payload received. Unknown name "foo" at \'generation_config\': Cannot find field.',
    status: 'INVALID_ARGUMENT',
    details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'generation_config', description: 'Invalid JSON payload received. Unknown name "foo" at \'generation_config\': Cannot find field.' }] }],
  },
};

/** The `:generateContent` answer a streamed transcript adds up to (adjacent text parts joined). */
export function whole(chunks: readonly Record<string, unknown>[]): Record<string, unknown> {
  type Chunk = { candidates: { content: { parts: WirePart[] }; finishReason?: string }[]; usageMetadata?: WireUsage };
  const parts: WirePart[] = [];
  for (const chunk of chunks as Chunk[]) {
    for (const part of chunk.candidates[0]!.content.parts) {
      const last = parts.at(-1);
      const joinable = typeof part['text'] === 'string' && typeof last?.['text'] === 'string' && last['thought'] === part['thought'];
      if (joinable) parts[parts.length - 1] = { ...last, text: `${String(last['text'])}${String(part['text'])}` };
      else parts.push(part);
    }
  }
  const last = chunks.at(-1) as Chunk;
  return response(parts, last.candidates[0]!.finishReason, last.usageMetadata);
}
