import type { Bus } from '../../bus/bus.js';
import type { Envelope } from '../../bus/events.js';
import { TroupeError } from '../../errors.js';
import type { RunOptions, RunResult } from '../agent-options.js';
import type { RunInput } from '../run/run-input.js';
import { EventBuffer } from './event-buffer.js';
import { sseBody, SSE_HEADERS } from './sse.js';
import { StreamEventMapper, type AgentStreamEvent } from './stream-event.js';

/** Options of `agent.stream`: those of `agent.run`, and what cancelling the stream does. */
export type AgentStreamOptions = RunOptions & {
  /**
   * Abort the run when the consumer stops early: `break` out of the loop, cancel the
   * `ReadableStream`, or a client that hangs up on the SSE response (default false: the run goes
   * on, and `result` resolves when it ends). Passing `signal` (an HTTP request's) does it too.
   */
  abortOnCancel?: boolean;
};

/**
 * A run as it happens: an async iterable of its events, ending with `finish`, plus its result.
 * Consume it once — iterate it, or take `textStream`, `toReadableStream()` or `toSSEResponse()` —
 * or not at all: the run goes on either way, and `result` resolves with what `agent.run` would.
 * Events wait in a buffer for a slow consumer, so the agent never waits for one.
 */
export type AgentStream = AsyncIterable<AgentStreamEvent> & {
  /** What `agent.run` resolves with; never rejects. */
  readonly result: Promise<RunResult>;
  /** Only the text as it is written (the `text-delta` events' text). */
  readonly textStream: AsyncIterable<string>;
  /** The events as a web `ReadableStream` (cancelling it is stopping early). */
  toReadableStream(): ReadableStream<AgentStreamEvent>;
  /**
   * A Server-Sent Events `Response` for an HTTP handler: one `event: <type>` and one `data: <JSON>`
   * line per event, headers for an unbuffered, uncached stream. `init` adds headers or a status.
   */
  toSSEResponse(init?: ResponseInit): Response;
};

/** What a stream needs of its agent. */
export type StreamHost = {
  readonly name: string;
  readonly bus: Bus;
  runWith(input: RunInput, options: RunOptions, done: (result: RunResult) => void): void;
  abort(reason?: string): void;
};

/**
 * Starts a run and streams it. Subscribes before the run starts, so that no event is missed even
 * when the whole run finishes at once; takes the agent's events until its `agent.finished`, which
 * are the run's own (one run at a time per agent). Throws what `agent.run` rejects with.
 */
export function streamRun(host: StreamHost, input: RunInput, options: AgentStreamOptions = {}): AgentStream {
  const { abortOnCancel = false, ...runOptions } = options;
  const buffer = new EventBuffer<AgentStreamEvent>();
  const mapper = new StreamEventMapper();
  const push = (event: AgentStreamEvent): void => buffer.push(event);
  let number: number | undefined;
  let finished = false;
  const onEvent = (event: Envelope): void => {
    if (finished) return;
    if (event.type === 'run.started') {
      // Another run's start, from a subscriber of this one's finish: not ours.
      if (number !== undefined) return;
      number = event.data.number;
    }
    if (event.type === 'agent.finished') {
      finished = true;
      stop();
      return;
    }
    mapper.map(event, push);
  };
  const stop = host.bus.on('*', onEvent, { agent: host.name });
  let resolve!: (result: RunResult) => void;
  const result = new Promise<RunResult>((settle) => (resolve = settle));
  buffer.onCancel = () => {
    stop();
    if (abortOnCancel && !finished) host.abort('the stream was cancelled');
  };
  try {
    host.runWith(input, runOptions, (outcome) => {
      finished = true;
      stop();
      buffer.push({ type: 'finish', result: outcome });
      buffer.end();
      resolve(outcome);
    });
  } catch (error) {
    stop();
    throw error;
  }
  return new RunStream(buffer, result);
}

class RunStream implements AgentStream {
  readonly result: Promise<RunResult>;
  private readonly buffer: EventBuffer<AgentStreamEvent>;
  private claimed = false;

  constructor(buffer: EventBuffer<AgentStreamEvent>, result: Promise<RunResult>) {
    this.buffer = buffer;
    this.result = result;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentStreamEvent> {
    if (this.claimed) {
      throw new TroupeError('invalid_config', 'this agent stream is consumed already: iterate it, or take textStream, toReadableStream() or toSSEResponse(), once');
    }
    this.claimed = true;
    return this.buffer.iterator();
  }

  get textStream(): AsyncIterable<string> {
    const events = this;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const event of events) if (event.type === 'text-delta') yield event.text;
      },
    };
  }

  toReadableStream(): ReadableStream<AgentStreamEvent> {
    const iterator = this[Symbol.asyncIterator]();
    return new ReadableStream<AgentStreamEvent>({
      async pull(controller) {
        const next = await iterator.next();
        if (next.done === true) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await iterator.return?.();
      },
    });
  }

  toSSEResponse(init: ResponseInit = {}): Response {
    const headers = new Headers(SSE_HEADERS);
    new Headers(init.headers).forEach((value, key) => headers.set(key, value));
    return new Response(sseBody(this[Symbol.asyncIterator]()), { ...init, headers });
  }
}
