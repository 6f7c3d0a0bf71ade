/**
 * Anthropic Messages API wire transcripts (API version 2026-10-21), written from the documented
 * formats: `POST /v1/messages` answers a `message` object, and with `stream: true` a server-sent
 * event stream of named events (`event: message_start` … `event: message_stop`, with `ping`s
 * between and `event: error` for a failure after the 200). Ids, signatures and usage have the
 * shapes the API sends.
 */
import type { SseEvent, WireReply } from '../wire-server.js';

export const MODEL = 'claude-sonnet-5-5';

type Usage = { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };

/** The usage object of a message, with the fields the API fills in. */
function usage(counts: Usage): Record<string, unknown> {
  return {
    input_tokens: counts.input_tokens,
    cache_creation_input_tokens: counts.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: counts.cache_read_input_tokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: counts.cache_creation_input_tokens ?? 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: counts.output_tokens,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: 'global',
    speed: 'standard',
  };
}

/** One named event, its `type` repeated in the data as the API does. */
export function event(type: string, data: Record<string, unknown> = {}): SseEvent {
  return { event: type, data: JSON.stringify({ type, ...data }) };
}

const ping = (): SseEvent => ({ event: 'ping', data: '{"type": "ping"}' });

/** `message_start` with an empty assistant message and the input usage. */
function messageStart(id: string, counts: Usage): SseEvent {
  return event('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: usage({ ...counts, output_tokens: 1 }),
    },
  });
}

/** A text block: start, one `text_delta` per piece, stop. */
function textBlock(index: number, pieces: readonly string[]): SseEvent[] {
  return [
    event('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } }),
    ...pieces.map((text) => event('content_block_delta', { index, delta: { type: 'text_delta', text } })),
    event('content_block_stop', { index }),
  ];
}

/** A client `tool_use` block: start with empty input, then the input as `input_json_delta` pieces. */
function toolStart(index: number, id: string, name: string): SseEvent {
  return event('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {}, caller: { type: 'direct' } } });
}

function jsonDelta(index: number, partial_json: string): SseEvent {
  return event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
}

function toolBlock(index: number, id: string, name: string, pieces: readonly string[]): SseEvent[] {
  return [toolStart(index, id, name), jsonDelta(index, ''), ...pieces.map((piece) => jsonDelta(index, piece)), event('content_block_stop', { index })];
}

/** A thinking block: thinking deltas, then the signature just before the block stops. */
function thinkingBlock(index: number, pieces: readonly string[], signature: string): SseEvent[] {
  return [
    event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ...pieces.map((thinking) => event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } })),
    event('content_block_delta', { index, delta: { type: 'signature_delta', signature } }),
    event('content_block_stop', { index }),
  ];
}

function messageEnd(stop_reason: string, output_tokens: number, stop_sequence: string | null = null, stop_details: unknown = null): SseEvent[] {
  return [
    event('message_delta', {
      delta: { stop_reason, stop_sequence, stop_details, container: null },
      usage: { output_tokens, input_tokens: null, cache_creation_input_tokens: null, cache_read_input_tokens: null, server_tool_use: null },
    }),
    event('message_stop'),
  ];
}

export const sse = (events: readonly SseEvent[], extra: Partial<Extract<WireReply, { kind: 'sse' }>> = {}): WireReply => ({
  kind: 'sse',
  headers: { 'request-id': 'req_011CZkZaBF1tNoB5wlCeusgy', 'anthropic-organization-id': 'org_01B2C3' },
  events,
  ...extra,
});

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): WireReply => ({
  kind: 'json',
  status,
  headers: { 'request-id': 'req_011CZkZbQ7w3mX1pfYxJ9aLe', ...headers },
  body,
});

// ---- streams ----------------------------------------------------------------------------------

export const SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds0fjy5SZQaXtQYUcZb4H8xJNaDk0pShBjpE2AbmpZ7AXH4g5NVJ0JbXsXNVaiKDSG';

/** A plain answer in four pieces, with a ping between. */
export const textStream: SseEvent[] = [
  messageStart('msg_01XFDUDYJgAACzvnptvVoYEL', { input_tokens: 412, output_tokens: 1, cache_read_input_tokens: 128 }),
  event('content_block_start', { index: 0, content_block: { type: 'text', text: '', citations: null } }),
  ping(),
  ...['Ana', ' plays', ' for the', ' red team.'].map((text) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
  event('content_block_stop', { index: 0 }),
  ...messageEnd('end_turn', 9),
];

/** An XML answer stopped at `</ACTION>`: the API strips the sequence and names it. */
export const ACTION_TEXT = 'Let me check.\n<ACTION><lookup_player><player_id>7</player_id></lookup_player>';
export const actionStream: SseEvent[] = [
  messageStart('msg_01Fq8mP3sZ4fXUjvWc2tHq9R', { input_tokens: 903, output_tokens: 1 }),
  ...textBlock(0, ['Let me check.\n<ACT', 'ION><lookup_player><player', '_id>7</player_id></lookup_player>']),
  ...messageEnd('stop_sequence', 24, '</ACTION>'),
];

/** One native call after a sentence. */
export const toolStream: SseEvent[] = [
  messageStart('msg_014p7gG3wDgGV9EUtLvnow3U', { input_tokens: 472, output_tokens: 2 }),
  ...textBlock(0, ['Let me look', ' that up.']),
  ...toolBlock(1, 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'lookup_player', ['{"player_id', '": "7"}']),
  ...messageEnd('tool_use', 56),
];

/** Two parallel calls, as the API sends them: one block after the other. */
export const parallelStream: SseEvent[] = [
  messageStart('msg_01BmZ7eHqXn5Rk2cWdYfLt4V', { input_tokens: 510, output_tokens: 2 }),
  ...textBlock(0, ['Checking both.']),
  ...toolBlock(1, 'toolu_01A09q90qw90lq917835lq9', 'lookup_player', ['{"player_id":', ' "7"}']),
  ...toolBlock(2, 'toolu_01B19r81rx81mr828946mr8', 'lookup_player', ['{"player', '_id": "9"}']),
  ...messageEnd('tool_use', 88),
];

/** Two calls whose pieces interleave (the decoder routes them by block index). */
export const interleavedStream: SseEvent[] = [
  messageStart('msg_01Hx2Kq8Wv4Yz6Nb3Pc5Rd7S', { input_tokens: 510, output_tokens: 2 }),
  toolStart(0, 'toolu_01C2interleavedAAAA', 'lookup_player'),
  toolStart(1, 'toolu_01D3interleavedBBBB', 'set_team'),
  jsonDelta(0, '{"player_id"'),
  jsonDelta(1, '{"player_id": "9", '),
  jsonDelta(0, ': "7"}'),
  jsonDelta(1, '"team": "red"}'),
  event('content_block_stop', { index: 0 }),
  event('content_block_stop', { index: 1 }),
  ...messageEnd('tool_use', 61),
];

/** Arguments the model wrote broken (a missing brace): they must reach troupe untouched. */
export const BROKEN_ARGUMENTS = '{"player_id": "7"';
export const brokenArgumentsStream: SseEvent[] = [
  messageStart('msg_01Lq3Zr7Tx9Vb1Nc5Md2Pf8G', { input_tokens: 472, output_tokens: 2 }),
  ...toolBlock(0, 'toolu_01Ebrokenjson7777777', 'lookup_player', ['{"player_id"', ': "7"']),
  ...messageEnd('tool_use', 20),
];

/** Extended thinking (with its signature) before the answer. */
export const thinkingStream: SseEvent[] = [
  messageStart('msg_01Th1nk1ngStr3amAbCdEf', { input_tokens: 366, output_tokens: 3 }),
  ...thinkingBlock(0, ['The roster says 7 is Ana;', ' she moved to red last week.'], SIGNATURE),
  ...textBlock(1, ['Ana is on', ' the red team.']),
  ...messageEnd('end_turn', 142),
];

/** Thinking, then a call: the next request must send that thinking back with the call. */
export const thinkingToolStream: SseEvent[] = [
  messageStart('msg_01Th1nkT00lStr3amGhIj', { input_tokens: 401, output_tokens: 3 }),
  ...thinkingBlock(0, ['I should look up player 7.'], SIGNATURE),
  ...toolBlock(1, 'toolu_01Fthinkingcall88888', 'lookup_player', ['{"player_id": "7"}']),
  ...messageEnd('tool_use', 77),
];

export const refusalStream: SseEvent[] = [
  messageStart('msg_01R3fusalStr3amKlMnOp', { input_tokens: 120, output_tokens: 1 }),
  ...messageEnd('refusal', 4, null, { type: 'refusal', category: 'cyber', explanation: null }),
];

export const lengthStream: SseEvent[] = [
  messageStart('msg_01L3ngthStr3amQrStUv', { input_tokens: 300, output_tokens: 1 }),
  ...textBlock(0, ['<ACTION><lookup_player><player_id>']),
  ...messageEnd('max_tokens', 16),
];

/** An answer that starts, then the API reports it is overloaded (after the 200). */
export const overloadedMidStream: SseEvent[] = [
  messageStart('msg_01Ov3rl0adedWxYzAbCd', { input_tokens: 300, output_tokens: 1 }),
  event('content_block_start', { index: 0, content_block: { type: 'text', text: '', citations: null } }),
  event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Ana' } }),
  { event: 'error', data: '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_011CZkZcOverloaded01"}' },
];

export const rateLimitedMidStream: SseEvent[] = [
  messageStart('msg_01Rat3L1m1tedEfGhIjK', { input_tokens: 300, output_tokens: 1 }),
  { event: 'error', data: '{"type": "error", "error": {"type": "rate_limit_error", "message": "Output tokens per minute exceeded"}}' },
];

// ---- whole messages (non-streaming) -----------------------------------------------------------

function message(id: string, content: unknown[], stop_reason: string, counts: Usage, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: MODEL,
    content,
    stop_reason,
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: usage(counts),
    ...extra,
  };
}

export const textMessage = message(
  'msg_01XFDUDYJgAACzvnptvVoYEL',
  [{ type: 'text', text: 'Ana plays for the red team.', citations: null }],
  'end_turn',
  { input_tokens: 412, output_tokens: 9, cache_creation_input_tokens: 64, cache_read_input_tokens: 128 },
);

export const actionMessage = message(
  'msg_01Fq8mP3sZ4fXUjvWc2tHq9R',
  [{ type: 'text', text: ACTION_TEXT, citations: null }],
  'stop_sequence',
  { input_tokens: 903, output_tokens: 24 },
  { stop_sequence: '</ACTION>' },
);

export const parallelMessage = message(
  'msg_01BmZ7eHqXn5Rk2cWdYfLt4V',
  [
    { type: 'thinking', thinking: 'Two players: look up both at once.', signature: SIGNATURE },
    { type: 'text', text: 'Checking both.', citations: null },
    { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'lookup_player', input: { player_id: '7' }, caller: { type: 'direct' } },
    { type: 'tool_use', id: 'toolu_01B19r81rx81mr828946mr8', name: 'lookup_player', input: { player_id: '9' }, caller: { type: 'direct' } },
  ],
  'tool_use',
  { input_tokens: 510, output_tokens: 88 },
);

/** A message ending with `stop_reason`, carrying one short text block. */
export const endedWith = (stop_reason: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  message('msg_01StopReason' + stop_reason.replace(/_/g, ''), [{ type: 'text', text: 'Partial', citations: null }], stop_reason, { input_tokens: 10, output_tokens: 2 }, extra);

// ---- errors -----------------------------------------------------------------------------------

export const errorBody = (type: string, messageText: string): Record<string, unknown> => ({
  type: 'error',
  error: { type, message: messageText },
  request_id: 'req_011CZkZdErr0r0000000001',
});

export const rateLimited = (retryAfterSeconds: number): WireReply =>
  json(errorBody('rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute.'), 429, {
    'retry-after': String(retryAfterSeconds),
    'anthropic-ratelimit-requests-limit': '50',
    'anthropic-ratelimit-requests-remaining': '0',
    'anthropic-ratelimit-requests-reset': '2026-11-21T10:15:07Z',
  });
