import { ScriptError } from '../errors.js';
import { ProviderError } from './provider-error.js';
import { requestAborted, withMessages } from './request-signal.js';
import type {
  FinishReason,
  ModelRequest,
  ModelResponse,
  NativeToolCall,
  Provider,
  ProviderAccepts,
  ProviderErrorKind,
  StreamEvent,
  Usage,
} from './types.js';

/** One scripted model turn: plain text, or the full shape of a response. */
export type ScriptedReply =
  | string
  | {
      text?: string;
      toolCalls?: NativeToolCall[];
      finishReason?: FinishReason;
      stopSequence?: string;
      usage?: Usage;
      /** Fail this call instead of answering (to test retries and provider errors). */
      error?: { kind: ProviderErrorKind; message?: string; retryable?: boolean; retryAfterMs?: number };
      /**
       * When streaming, write this many characters of `text` before `error` strikes (a stream cut
       * part-way). Without `error`, the stream just ends there, unfinished.
       */
      cutAfter?: number;
    };

/** A scripted brain: the next turn as a function of the conversation so far. */
export type ScriptFunction = (request: ModelRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

/** A provider that answers from a script, plus what a test needs to check it was used fully. */
export type ScriptedProvider = Provider & {
  /** Every request received, in order, each with the messages as they were at that call. */
  readonly requests: readonly ModelRequest[];
  /** Turns not yet used (always 0 for a function script). */
  readonly remaining: number;
  /** Throws a ScriptError when a queued turn was never used. */
  assertConsumed(): void;
};

export type ScriptedProviderOptions = {
  name?: string;
  model?: string;
  /**
   * Offer `stream()` too, writing each turn's text in chunks of `chunkSize` characters (default 8)
   * and native calls as argument deltas, as a streaming model would.
   */
  stream?: boolean | { chunkSize?: number };
  /** What the brain claims to take besides text, to test how images reach a model (default: text only). */
  accepts?: ProviderAccepts;
};

/**
 * A provider that stands in for a model: offline, deterministic, and strict. Given a list, it
 * answers each call with the next turn and rejects a call past the end; given a function, it asks
 * the function. Usage is estimated at four characters a token unless a turn states it.
 *
 * @example
 * const provider = scriptedProvider([
 *   '<ACTION><lookup_player><id>7</id></lookup_player></ACTION>',
 *   'Player 7 is Ana.',
 * ]);
 */
export function scriptedProvider(
  script: readonly ScriptedReply[] | ScriptFunction,
  options: ScriptedProviderOptions = {},
): ScriptedProvider {
  let chunkSize: number | undefined;
  if (options.stream) {
    chunkSize = typeof options.stream === 'object' ? (options.stream.chunkSize ?? 8) : 8;
    if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) {
      throw new ScriptError(`scriptedProvider: stream.chunkSize must be a positive integer, got ${String(chunkSize)}`);
    }
  }
  return new Script(script, options, chunkSize);
}

/**
 * A scripted provider. A class, so that `requests` and `remaining` are getters of the prototype:
 * getters of each provider's own make V8 keep its properties in a dictionary (some 600 bytes a
 * provider, and a crowd or a test suite makes one per agent).
 */
class Script implements ScriptedProvider {
  readonly name: string;
  readonly model: string;
  // Declared only: set when the options give them, absent otherwise (as the object literal had them).
  declare readonly accepts?: ProviderAccepts;
  declare stream?: (request: ModelRequest) => AsyncIterable<StreamEvent>;
  private readonly script: ScriptFunction | undefined;
  private readonly queue: ScriptedReply[] | undefined;
  // Made at the first call (or the first read of `requests`): a literal of one keeps no spare
  // room, where a push onto an empty array reserves seventeen slots.
  private log: ModelRequest[] | undefined;
  private used = 0;

  constructor(script: readonly ScriptedReply[] | ScriptFunction, options: ScriptedProviderOptions, chunkSize: number | undefined) {
    this.name = options.name ?? 'scripted';
    this.model = options.model ?? 'script';
    if (options.accepts !== undefined) this.accepts = Object.freeze({ ...options.accepts });
    this.script = typeof script === 'function' ? script : undefined;
    this.queue = typeof script === 'function' ? undefined : [...script];
    if (chunkSize !== undefined) this.stream = (request) => streamTurn(this.take(request), request, chunkSize);
  }

  get requests(): readonly ModelRequest[] {
    return (this.log ??= []);
  }

  get remaining(): number {
    return this.queue === undefined ? 0 : Math.max(0, this.queue.length - this.used);
  }

  // Own functions bound to this provider, not prototype methods: `{ ...provider, name }` and
  // `const { assertConsumed } = provider` go on working, as with the provider of closures.
  readonly complete = (request: ModelRequest): Promise<ModelResponse> => this.take(request).then((turn) => scriptedResponse(turn, request));

  readonly assertConsumed = (): void => {
    const { queue, used } = this;
    if (queue !== undefined && used < queue.length) {
      throw new ScriptError(`scripted provider has ${queue.length - used} unused ${queue.length - used === 1 ? 'reply' : 'replies'} of ${queue.length}`);
    }
  };

  /**
   * Records the call and settles with its turn. Promise reactions rather than nested async
   * functions: a call parked on a script's promise holds a few small records instead of a
   * suspended frame per level. The turn settles on the same microtask as the async version did
   * (its value adopted as an async function's return adopts it), so runs that share a bus
   * interleave as before.
   */
  private take(request: ModelRequest): Promise<ScriptedReply> {
    try {
      // The agent keeps appending to its history: keep the conversation as it was at this call.
      const copy = withMessages(request, [...request.messages]);
      if (this.log === undefined) this.log = [copy];
      else this.log.push(copy);
      this.used++;
      if (requestAborted(request)) throw new ProviderError('aborted', 'the model call was aborted');
    } catch (error) {
      return Promise.reject(error);
    }
    // Settled as the async version's turn was: a value at once, a thenable once adopted (a tick
    // after it settles), a throw as a rejection. A value skips an executor and its resolving
    // functions: the common case, a list of replies.
    let turn: ScriptedReply | PromiseLike<ScriptedReply>;
    try {
      turn = this.next(request);
    } catch (error) {
      return Promise.reject(error).then(undefined, scriptFailure);
    }
    const settled = isThenable(turn) ? new Promise<ScriptedReply>((resolve) => resolve(turn)) : Promise.resolve(turn);
    return settled.then(undefined, scriptFailure);
  }

  private next(request: ModelRequest): ScriptedReply | Promise<ScriptedReply> {
    const { queue, used, script } = this;
    // Called as a plain function, with no `this`, as a script always was.
    if (queue === undefined) return script!(request, used - 1);
    const turn = queue[used - 1];
    if (turn === undefined) {
      throw new ScriptError(
        `scripted provider received call ${used} but its script has only ${queue.length} turn(s); ` +
          `the agent asked for more than the test expected`,
      );
    }
    return turn;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** A script that failed as a script (past its end, a ScriptError of its own) fails the call as a provider would. */
function scriptFailure(error: unknown): never {
  if (error instanceof ScriptError) throw new ProviderError('script', error.message, { cause: error });
  throw error;
}

/** Streams a scripted turn: text in chunks, native calls as argument deltas, then `finish`. */
async function* streamTurn(pending: Promise<ScriptedReply>, request: ModelRequest, chunkSize: number): AsyncGenerator<StreamEvent> {
  const turn = await pending;
  const cutAfter = typeof turn === 'object' ? turn.cutAfter : undefined;
  if (typeof turn === 'object' && turn.error !== undefined && cutAfter === undefined) scriptedResponse(turn, request);
  const text = typeof turn === 'string' ? turn : (turn.text ?? '');
  const end = cutAfter === undefined ? text.length : Math.min(cutAfter, text.length);
  for (let at = 0; at < end; at += chunkSize) {
    if (requestAborted(request)) throw new ProviderError('aborted', 'the model call was aborted');
    yield { type: 'text', text: text.slice(at, Math.min(at + chunkSize, end)) };
    // A turn of the event loop between chunks, as over a network: consumers see real streaming.
    await Promise.resolve();
  }
  if (cutAfter !== undefined) {
    if (typeof turn === 'object' && turn.error !== undefined) scriptedResponse(turn, request);
    return;
  }
  const response = scriptedResponse(turn, request);
  for (const [index, call] of (response.toolCalls ?? []).entries()) {
    for (let at = 0; at < Math.max(call.arguments.length, 1); at += chunkSize) {
      const delta: StreamEvent = { type: 'tool_call_delta', index, argumentsDelta: call.arguments.slice(at, at + chunkSize) };
      if (at === 0) Object.assign(delta, { id: call.id, name: call.name });
      yield delta;
    }
  }
  yield { type: 'finish', response };
}

/**
 * The model response a scripted turn stands for (a turn's `error` throws its ProviderError).
 * Usage is the turn's own, or estimated at four characters a token from `request` (none without one).
 */
export function scriptedResponse(turn: ScriptedReply, request: ModelRequest | undefined): ModelResponse {
  if (typeof turn === 'string') {
    return request !== undefined ? { text: turn, finishReason: 'stop', usage: estimateUsage(request, turn) } : { text: turn, finishReason: 'stop' };
  }
  if (turn.error !== undefined) {
    const { kind, message, retryable, retryAfterMs } = turn.error;
    throw new ProviderError(kind, message ?? `scripted ${kind} error`, {
      ...(retryable !== undefined && { retryable }),
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
  }
  const text = turn.text ?? '';
  const response: ModelResponse = {
    text,
    finishReason: turn.finishReason ?? (turn.toolCalls?.length ? 'tool_calls' : 'stop'),
  };
  const usage = turn.usage ?? (request !== undefined ? estimateUsage(request, text) : undefined);
  if (usage !== undefined) response.usage = usage;
  if (turn.toolCalls !== undefined) response.toolCalls = turn.toolCalls;
  if (turn.stopSequence !== undefined) response.stopSequence = turn.stopSequence;
  return response;
}

function estimateUsage(request: ModelRequest, text: string): Usage {
  let inputChars = 0;
  for (const message of request.messages) inputChars += message.content.length;
  const inputTokens = Math.ceil(inputChars / 4);
  const outputTokens = Math.ceil(text.length / 4);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, estimated: true };
}
