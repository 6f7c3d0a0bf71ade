import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBufferedDelivery, type BufferedDelivery, type Delivery } from '../bus/backpressure.js';
import type { BackpressurePolicy } from '../bus/event-queue.js';
import type { Envelope } from '../bus/events.js';
import type { Redactor } from '../bus/safe-json.js';
import type { AgentSummary } from './agent-tally.js';
import type { EventHistory } from './event-history.js';
import type { InspectorNotice } from './inspector-options.js';

/** What every stream of one server shares. */
export type StreamContext = {
  history: EventHistory;
  /** Events waiting per client before a client that stopped reading is dropped. */
  queue: number;
  redactor: Redactor;
  /** The session log's fast writer: an envelope's JSON when its data is plain and shows no secret. */
  /** An event as the JSON line a client gets (redacted, truncated past `maxEventChars`). */
  line: (event: Envelope) => string;
  maxEventChars: number;
  notify: (notice: InspectorNotice) => void;
  /** Data JSON per envelope, serialized once for all clients (kept only while there are several). */
  frames: WeakMap<Envelope, string>;
  /** Streams open now. */
  clients: () => number;
};

/** One open `/events` stream. */
export type EventStream = {
  /** Writes a heartbeat comment, unless the client is behind (then data is on its way anyway). */
  heartbeat(): void;
  /** Ends the stream (the server is closing). */
  end(): void;
  readonly closed: Promise<void>;
};

/** The client asked for: where to resume and how to be fed. */
export type StreamRequest = { lastEventId: string | undefined; policy: BackpressurePolicy };

/** Milliseconds a browser waits before reconnecting, sent first. */
const RETRY_MS = 1_000;

/**
 * Opens an SSE stream: `retry`, then (with a `Last-Event-ID` no longer held, or without one once
 * the history has evicted events) a `gap`, then the history after that id (all of it without one), then live events, each framed with its envelope
 * id. Replay and live go through one queue with the client's policy: taking the replay and
 * subscribing happen in the same synchronous step, so nothing falls between them. A client whose
 * socket stops taking data and whose queue fills is dropped; the publisher never waits for it.
 */
export function openEventStream(req: IncomingMessage, res: ServerResponse, context: StreamContext, request: StreamRequest): EventStream {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'X-Accel-Buffering': 'no' });
  req.socket.setNoDelay(true);
  let waitingForDrain = false;
  let ended = false;
  let closeStream: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (closeStream = resolve));

  // Frames wait in `pending` and go out in one write per turn of the event loop (or per
  // FLUSH_CHARS): a write per event cost the crowd more than serializing it.
  let pending = '';
  let flushQueued = false;
  let drained: Promise<void> | undefined;
  const write = (text: string): void | Promise<void> => {
    if (ended || res.destroyed) return;
    if (res.write(text)) return;
    waitingForDrain = true;
    drained = new Promise<void>((resolve) => {
      const done = (): void => {
        waitingForDrain = false;
        drained = undefined;
        res.off('drain', done);
        res.off('close', done);
        resolve();
        // What was taken while the socket was full goes out now.
        if (pending !== '') queueFlush();
      };
      res.on('drain', done);
      res.on('close', done);
    });
    return drained;
  };
  const flush = (): void | Promise<void> => {
    flushQueued = false;
    if (pending === '' || waitingForDrain) return drained;
    const text = pending;
    pending = '';
    return write(text);
  };
  const flushLater = (): void => void flush();
  const queueFlush = (): void => {
    if (flushQueued) return;
    flushQueued = true;
    setImmediate(flushLater);
  };
  const deliver = (event: Envelope, delivery: Delivery): void | Promise<void> => {
    const gap = delivery.dropped > 0 ? gapFrame(delivery.dropped, request.policy) : '';
    pending += gap + eventFrame(event, dataText(event, context));
    // A full socket holds the queue (and its policy) back, as one write per event did.
    if (waitingForDrain) return drained;
    if (pending.length >= FLUSH_CHARS) return flush();
    queueFlush();
  };
  const delivery: BufferedDelivery = createBufferedDelivery(deliver, {
    policy: request.policy,
    max: context.queue,
    onOverflow: ({ policy, max }) => {
      res.destroy();
      context.notify({
        kind: 'client_dropped',
        policy,
        max,
        message: `troupe inspector: dropped an event stream that stopped reading (${max} events waiting, policy ${policy}); it may reconnect and resume`,
      });
    },
  });

  res.write(`retry: ${RETRY_MS}\n\n`);
  const { history } = context;
  const slice = history.after(request.lastEventId);
  if (!slice.found) res.write(gapFrame(slice.missed, 'history', { kept: history.capacity }));
  else if (request.lastEventId === undefined && history.evicted > 0) {
    // A page that opens late: the events before the oldest held one are gone. It is told how many,
    // and gets what they said of each agent, so its counts start where the held events begin.
    res.write(gapFrame(history.evicted, 'history', { kept: history.capacity, earlier: history.earlier() }));
  }
  // The replay was asked for: it does not count toward the bound (drop-oldest still trims it).
  for (const event of slice.events) delivery.push(event, { counted: false });
  const unsubscribe = context.history.subscribe((event) => delivery.push(event));

  res.on('close', () => {
    ended = true;
    unsubscribe();
    delivery.stop();
    closeStream();
  });
  return {
    heartbeat() {
      if (!waitingForDrain && !ended) res.write(': heartbeat\n\n');
    },
    end() {
      if (ended) return;
      if (!waitingForDrain) void flush();
      ended = true;
      delivery.stop();
      // A client that is not reading would never take the end of the stream: cut it.
      if (waitingForDrain) res.destroy();
      else res.end();
    },
    closed,
  };
}

/** One event as an SSE frame. An id that could break the framing (a damaged log's) is left out. */
export function eventFrame(event: Envelope, data: string): string {
  const id = typeof event.id === 'string' && !/[\r\n\0]/.test(event.id) ? `id: ${event.id}\n` : '';
  return `${id}event: troupe\ndata: ${data}\n\n`;
}

/**
 * The `gap` frame: events the client will not get. `missed` is a count when known; `reason` says
 * whether the history no longer held them or the client's policy dropped them; `kept` is how many
 * events the history holds; `earlier`, for a client that connects after events were evicted, is
 * each agent as those events left it (to count on from).
 */
export function gapFrame(missed: number | null, reason: 'history' | BackpressurePolicy, extra: { kept?: number; earlier?: AgentSummary[] } = {}): string {
  return `event: gap\ndata: ${JSON.stringify({ missed, reason, ...extra })}\n\n`;
}

/**
 * The envelope's JSON (with `v`), guarded like the session log's: deep, cyclic or exotic data
 * becomes placeholders, secrets are redacted, and data past `maxEventChars` becomes a
 * `$truncated` preview. JSON never holds a raw line break, so one `data:` line carries it.
 */
function dataText(event: Envelope, context: StreamContext): string {
  // One page: nobody else will ask, and a weak map of every event costs the collector more than
  // the serializing it saves.
  if (context.clients() <= 1) return context.line(event);
  let text = context.frames.get(event);
  if (text === undefined) {
    text = context.line(event);
    context.frames.set(event, text);
  }
  return text;
}

/** Characters of frames waiting past which they are written at once, not at the turn's end. */
const FLUSH_CHARS = 64 * 1024;
