import { ownGetter } from '../own-getter.js';
import type { ModelRequest } from './types.js';

/** Where a signal comes from when it is made on first use: an agent's run. */
export type SignalSource = {
  /** Whether the signal is aborted (or would be, once made). */
  readonly aborted: boolean;
  /** The signal, made on the first call. */
  signal(): AbortSignal;
};

/**
 * A model request whose `signal` is made when something reads it (an own getter, see
 * `ownGetter`: `{ ...request }` still carries it). In Node 20 an AbortSignal costs microseconds to
 * make, and a scripted brain, which answers from a function, never needs one.
 */
export class RunRequest implements ModelRequest {
  declare messages: ModelRequest['messages'];
  declare round: number;
  declare agent: string;
  declare readonly signal: AbortSignal;
  readonly #source: SignalSource;

  static readonly #signalProperty = ownGetter((request: RunRequest) => request.#source.signal());

  constructor(messages: ModelRequest['messages'], source: SignalSource, round: number, agent: string) {
    this.#source = source;
    this.messages = messages;
    Object.defineProperty(this, 'signal', RunRequest.#signalProperty);
    this.round = round;
    this.agent = agent;
  }

  /**
   * A copy of `request` with other messages: what a spread would make, except that a run's
   * request stays one, its signal still made on first read.
   */
  static withMessages(request: ModelRequest, messages: ModelRequest['messages']): ModelRequest {
    if (!(#source in request)) return { ...request, messages };
    const copy = new RunRequest(messages, request.#source, request.round, request.agent);
    const from = request as unknown as Record<string, unknown>;
    const to = copy as unknown as Record<string, unknown>;
    // The optional fields (tools, stop, …); `Object.keys` reads no getter.
    for (const key of Object.keys(request)) if (!(key in copy)) to[key] = from[key];
    return copy;
  }

  /** Whether `request`'s call was aborted, without making a signal that was not made yet. */
  static aborted(request: ModelRequest): boolean {
    return #source in request ? request.#source.aborted : request.signal.aborted;
  }
}

/** Whether the request's call was aborted; for a run's request, without making its signal. */
export const requestAborted: (request: ModelRequest) => boolean = RunRequest.aborted;

/** A copy of the request with other messages; a run's request keeps its signal unmade. */
export const withMessages: (request: ModelRequest, messages: ModelRequest['messages']) => ModelRequest = RunRequest.withMessages;
