import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { ConfigError, errorMessage } from '../errors.js';
import { redactKeyLike } from './key-ring.js';
import { ProviderError, toProviderError } from './provider-error.js';
import { providerIdentity } from './provider-identity.js';
import type { ChatMessage, MessageImage, ModelRequest, ModelResponse, Provider, ProviderAccepts, ProviderErrorKind, StreamEvent } from './types.js';

/** The cassette format's version, in its first line. */
export const CASSETTE_VERSION = 1;

/** One recorded model call: what was asked, and what came back (or how it failed). */
export type CassetteEntry = {
  key: string;
  agent: string;
  round: number;
  request: RecordedRequest;
  response?: ModelResponse;
  /** The stream's events, for a streamed call (ending with `finish`, unless it failed). */
  stream?: StreamEvent[];
  error?: { kind: ProviderErrorKind; message: string; retryable: boolean; retryAfterMs?: number; status?: number };
};

/** A request without its signal: what identifies it on replay. */
export type RecordedRequest = Pick<ModelRequest, 'messages' | 'tools' | 'toolChoice' | 'stop' | 'temperature' | 'maxTokens'>;

/** `accepts`: the recorded provider's, so a replay routes tool images (and words observations) alike. */
type Header = { cassette: number; provider: string; model?: string; accepts?: ProviderAccepts; recordedAt: string };

/** A cassette being replayed: a provider, plus what a test needs to check it was used fully. */
export type CassetteProvider = Provider & {
  /** Recorded calls not replayed yet. */
  readonly remaining: number;
  /** Throws when a recorded call was never asked for. */
  assertConsumed(): void;
};

export type RecordOptions = {
  /** Extra redaction for request and response text (keys and key-like strings are always masked). */
  redact?: (text: string) => string;
};

/**
 * Wraps a provider so that every call, whole or streamed, and every failure is appended to a
 * cassette file (JSONL, one call a line, written as it completes). Keys and key-like strings are
 * masked; `redact` masks more. Replay the file with `cassetteProvider`.
 *
 * @example
 * const provider = recordProvider(openaiProvider({ model: 'gpt-4o-mini' }), 'test/cassettes/referee.jsonl');
 */
export function recordProvider(provider: Provider, file: string, options: RecordOptions = {}): Provider {
  const header: Header = { cassette: CASSETTE_VERSION, provider: provider.name, recordedAt: new Date().toISOString() };
  if (provider.model !== undefined) header.model = provider.model;
  if (provider.accepts !== undefined) header.accepts = { ...provider.accepts };
  writeFileSync(file, `${JSON.stringify(header)}\n`);
  const clean = (text: string): string => redactKeyLike(options.redact ? options.redact(text) : text);
  const write = (entry: CassetteEntry): void => appendFileSync(file, `${JSON.stringify(entry, (_, value: unknown) => (typeof value === 'string' ? clean(value) : value))}\n`);
  const failed = (request: ModelRequest, thrown: unknown): CassetteEntry['error'] => {
    const error = toProviderError(thrown, request.signal);
    const recorded: NonNullable<CassetteEntry['error']> = { kind: error.kind, message: error.message, retryable: error.retryable };
    if (error.retryAfterMs !== undefined) recorded.retryAfterMs = error.retryAfterMs;
    if (error.status !== undefined) recorded.status = error.status;
    return recorded;
  };

  const recording: Provider = {
    ...providerIdentity(provider),
    async complete(request) {
      const entry = entryFor(request);
      try {
        entry.response = await provider.complete(request);
        return entry.response;
      } catch (thrown) {
        entry.error = failed(request, thrown);
        throw thrown;
      } finally {
        write(entry);
      }
    },
  };
  if (provider.stream !== undefined) {
    const open = provider.stream.bind(provider);
    recording.stream = async function* (request) {
      const entry = entryFor(request);
      const events: StreamEvent[] = (entry.stream = []);
      try {
        for await (const event of open(request)) {
          events.push(event);
          if (event.type === 'finish') entry.response = event.response;
          yield event;
        }
      } catch (thrown) {
        entry.error = failed(request, thrown);
        throw thrown;
      } finally {
        // A consumer that stopped early (after `</ACTION>`) still leaves what it saw on the tape.
        write(entry);
      }
    };
  }
  return recording;
}

/**
 * Replays a cassette: each request gets the response recorded for the same request (same agent,
 * round, messages, tools and settings), in recorded order when one was asked more than once. A
 * request that was not recorded fails at once with a clear error, never reaching a model.
 */
export function cassetteProvider(file: string): CassetteProvider {
  const { header, entries } = readCassette(file);
  const byKey = new Map<string, CassetteEntry[]>();
  for (const entry of entries) {
    const list = byKey.get(entry.key);
    if (list === undefined) byKey.set(entry.key, [entry]);
    else list.push(entry);
  }
  let replayed = 0;
  const take = (request: ModelRequest): CassetteEntry => {
    if (request.signal.aborted) throw new ProviderError('aborted', 'the model call was aborted');
    const entry = byKey.get(requestKey(request))?.shift();
    if (entry === undefined) throw unrecorded(file, request, entries);
    replayed++;
    return entry;
  };
  const provider: CassetteProvider = {
    name: header.provider,
    ...(header.model !== undefined && { model: header.model }),
    ...(typeof header.accepts === 'object' && header.accepts !== null && { accepts: Object.freeze({ ...header.accepts }) }),
    get remaining() {
      return entries.length - replayed;
    },
    async complete(request) {
      const entry = take(request);
      if (entry.error !== undefined) throw replayError(entry.error);
      if (entry.response !== undefined) return entry.response;
      throw new ProviderError('script', `cassette ${file}: the call of agent "${entry.agent}" round ${entry.round} was recorded as a stream; replay it with streaming on`);
    },
    assertConsumed() {
      if (provider.remaining > 0) throw new ConfigError(`cassette ${file}: ${provider.remaining} recorded call(s) of ${entries.length} were never replayed`);
    },
  };
  if (entries.some((entry) => entry.stream !== undefined)) {
    provider.stream = async function* (request) {
      const entry = take(request);
      const events = entry.stream ?? (entry.response !== undefined ? [{ type: 'finish', response: entry.response } as StreamEvent] : []);
      for (const event of events) yield event;
      if (entry.error !== undefined) throw replayError(entry.error);
    };
  }
  return provider;
}

/** Identifies a request: agent, round and everything sent to the model, hashed. */
export function requestKey(request: ModelRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([request.agent, request.round, recordedRequest(request)]))
    .digest('hex')
    .slice(0, 24);
}

function entryFor(request: ModelRequest): CassetteEntry {
  return { key: requestKey(request), agent: request.agent, round: request.round, request: recordedRequest(request) };
}

function recordedRequest(request: ModelRequest): RecordedRequest {
  const recorded: RecordedRequest = { messages: request.messages.map(recordedMessage) };
  if (request.tools !== undefined) recorded.tools = request.tools;
  if (request.toolChoice !== undefined) recorded.toolChoice = request.toolChoice;
  if (request.stop !== undefined) recorded.stop = request.stop;
  if (request.temperature !== undefined) recorded.temperature = request.temperature;
  if (request.maxTokens !== undefined) recorded.maxTokens = request.maxTokens;
  return recorded;
}

/**
 * A message as the cassette keeps it. Images are kept as their type, size and SHA-256: enough to
 * match a request, and a cassette line stays small (JSON would spell a Uint8Array byte by byte).
 */
function recordedMessage(message: ChatMessage): ChatMessage {
  if ((message.role !== 'user' && message.role !== 'tool') || message.images === undefined) return { ...message };
  const images = message.images.map((image) => ({
    mediaType: image.mediaType,
    bytes: image.data.byteLength,
    sha256: createHash('sha256').update(image.data).digest('hex'),
  }));
  return { ...message, images: images as unknown as MessageImage[] };
}

function replayError(error: NonNullable<CassetteEntry['error']>): ProviderError {
  return new ProviderError(error.kind, error.message, {
    retryable: error.retryable,
    ...(error.retryAfterMs !== undefined && { retryAfterMs: error.retryAfterMs }),
    ...(error.status !== undefined && { status: error.status }),
  });
}

function unrecorded(file: string, request: ModelRequest, entries: readonly CassetteEntry[]): ProviderError {
  const same = entries.filter((entry) => entry.agent === request.agent && entry.round === request.round);
  const hint =
    same.length > 0
      ? `a call of that agent and round was recorded, but with other messages or settings (the conversation changed: re-record the cassette)`
      : `the cassette holds ${entries.length} call(s), none of agent "${request.agent}" round ${request.round}`;
  return new ProviderError('script', `cassette ${file}: no recording for agent "${request.agent}" round ${request.round}: ${hint}`, { retryable: false });
}

function readCassette(file: string): { header: Header; entries: CassetteEntry[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cassette ${file} cannot be read: ${errorMessage(error)}`);
  }
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const parse = (line: string, number: number): unknown => {
    try {
      return JSON.parse(line);
    } catch {
      throw new ConfigError(`cassette ${file}: line ${number} is not JSON`);
    }
  };
  const header = parse(lines[0] ?? '', 1) as Partial<Header>;
  if (header?.cassette !== CASSETTE_VERSION || typeof header.provider !== 'string') {
    throw new ConfigError(`cassette ${file}: not a troupe cassette of version ${CASSETTE_VERSION} (its first line must be the header)`);
  }
  const entries = lines.slice(1).map((line, index) => {
    const entry = parse(line, index + 2) as CassetteEntry;
    if (typeof entry?.key !== 'string' || typeof entry.agent !== 'string') throw new ConfigError(`cassette ${file}: line ${index + 2} is not a recorded call`);
    return entry;
  });
  return { header: header as Header, entries };
}
