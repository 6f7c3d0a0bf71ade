import { classifyFailure, factsOf } from './classify-failure.js';
import type { KeyRing, LeasedKey } from './key-ring.js';
import { ProviderError } from './provider-error.js';
import type { ModelRequest, StreamEvent } from './types.js';

/** The longest a model may stay silent (before its first byte, or between chunks) by default. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** What every adapter shares: who it is, its keys, and how long silence may last. */
export type AdapterContext = {
  provider: string;
  /** Absent for servers that take no key (a local Ollama, vLLM or llama.cpp). */
  keys?: KeyRing;
  timeoutMs: number;
};

/**
 * A timer that aborts a request when the model stays silent for `timeoutMs`: before the first
 * byte, or between two chunks of a stream (`touch` on each). The client libraries only see an
 * abort, so `timedOut` tells a timeout from the caller's own abort.
 */
export class Silence {
  readonly signal: AbortSignal;
  timedOut = false;
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly unlink: () => void;

  constructor(
    parent: AbortSignal,
    private readonly timeoutMs: number,
  ) {
    this.signal = this.controller.signal;
    const onAbort = (): void => this.controller.abort(parent.reason);
    if (parent.aborted) onAbort();
    else parent.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => parent.removeEventListener('abort', onAbort);
    this.touch();
  }

  /** The model said something: the silence starts again. */
  touch(): void {
    clearTimeout(this.timer);
    if (this.controller.signal.aborted || !Number.isFinite(this.timeoutMs)) return;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error(`no answer within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    this.timer.unref?.();
  }

  /** Ends the request (early stop, or done): stops the timer and aborts what is still open. */
  close(): void {
    clearTimeout(this.timer);
    this.unlink();
    if (!this.controller.signal.aborted) this.controller.abort(new Error('request closed'));
  }
}

/**
 * Runs one non-streaming request with a key from the ring, under the silence timer, and turns any
 * failure into a classified ProviderError (resting a rate-limited key, setting aside a refused one).
 */
export async function guardedCall<T>(
  context: AdapterContext,
  request: ModelRequest,
  call: (key: LeasedKey | undefined, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const key = leaseKey(context);
  const silence = new Silence(request.signal, context.timeoutMs);
  try {
    return await call(key, silence.signal);
  } catch (thrown) {
    throw failure(context, key, thrown, request.signal, silence);
  } finally {
    silence.close();
  }
}

/**
 * Runs one streaming request like `guardedCall`: the silence timer restarts on every event, and a
 * consumer that stops early (`break`) closes the request so the generation stops.
 */
export async function* guardedStream(
  context: AdapterContext,
  request: ModelRequest,
  open: (key: LeasedKey | undefined, signal: AbortSignal) => AsyncIterable<StreamEvent> | Promise<AsyncIterable<StreamEvent>>,
): AsyncGenerator<StreamEvent> {
  const key = leaseKey(context);
  const silence = new Silence(request.signal, context.timeoutMs);
  try {
    let events: AsyncIterable<StreamEvent>;
    try {
      events = await open(key, silence.signal);
    } catch (thrown) {
      throw failure(context, key, thrown, request.signal, silence);
    }
    const iterator = events[Symbol.asyncIterator]();
    try {
      for (;;) {
        let step: IteratorResult<StreamEvent>;
        try {
          step = await iterator.next();
        } catch (thrown) {
          throw failure(context, key, thrown, request.signal, silence);
        }
        if (step.done) return;
        silence.touch();
        yield step.value;
      }
    } finally {
      // Stopped early or failed: let the client library release the connection.
      await Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
  } finally {
    silence.close();
  }
}

function leaseKey(context: AdapterContext): LeasedKey | undefined {
  if (context.keys === undefined) return undefined;
  const key = context.keys.lease();
  if (key === undefined) {
    throw new ProviderError('auth', `${context.provider}: every API key was refused (${context.keys.size} tried)`, { retryable: false });
  }
  return key;
}

/** Classifies a failure and updates the key ring: a rate-limited key rests, a refused key is set aside. */
function failure(context: AdapterContext, key: LeasedKey | undefined, thrown: unknown, signal: AbortSignal, silence: Silence): ProviderError {
  if (thrown instanceof ProviderError) return thrown;
  const error = classifyFailure(factsOf(thrown), {
    provider: context.provider,
    signal,
    timedOut: silence.timedOut,
    timeoutMs: context.timeoutMs,
    ...(context.keys !== undefined && { redact: (text: string) => context.keys!.redact(text) }),
  });
  const ring = context.keys;
  if (ring === undefined || key === undefined) return error;
  if (error.kind === 'rate_limit') ring.rest(key, error.retryAfterMs);
  else if (error.kind === 'auth') ring.revoke(key);
  else return error;
  const wait = ring.waitMs();
  const options = { cause: error, ...(error.status !== undefined && { status: error.status }) };
  if (wait === undefined) {
    return new ProviderError('auth', `${error.message} (every API key has now been refused)`, { ...options, retryable: false });
  }
  // Another key can take over: retry, waiting only as long as the next key needs.
  const why = error.kind === 'auth' ? `${key.label} refused` : `${key.label} rate-limited`;
  const message = ring.size > 1 ? `${error.message} (${why}; the next key takes over)` : error.message;
  return new ProviderError(error.kind, message, { ...options, retryable: true, retryAfterMs: wait });
}

// Every request resends the whole history, so an image is encoded once and remembered for as
// long as its bytes live.
const encoded = new WeakMap<Uint8Array, string>();

/** An image's bytes as base64, the way every provider's JSON body carries them. */
export function base64(data: Uint8Array): string {
  let text = encoded.get(data);
  if (text === undefined) {
    text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
    encoded.set(data, text);
  }
  return text;
}

/**
 * A stored call's arguments as the JSON object Anthropic's `tool_use.input` and Gemini's
 * `functionCall.args` must be. Arguments that are not one (broken JSON the model wrote, an array)
 * go back as `{}`: the APIs refuse anything else, and the tool result after the call already told
 * the model what was wrong with them.
 */
export function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
