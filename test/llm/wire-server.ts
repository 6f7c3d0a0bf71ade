import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One server-sent event: a bare data line, or a named event. */
export type SseEvent = string | { event?: string; data: string };

/**
 * What the server answers to the next request. Transcripts are written from each provider's
 * documented wire format; faults are injected, never waited for.
 */
export type WireReply =
  | { kind: 'json'; status?: number; headers?: Record<string, string>; body: unknown }
  | {
      kind: 'sse';
      status?: number;
      headers?: Record<string, string>;
      events: readonly SseEvent[];
      /** Destroy the socket after this many events (a stream cut mid-way). */
      cutAfter?: number;
      /** Stop writing after this many events and keep the socket open (a hung stream). */
      hangAfter?: number;
      /** Line ending between fields and events (Gemini uses CRLF). */
      newline?: '\n' | '\r\n';
    }
  /** Destroy the socket without answering (ECONNRESET on the client). */
  | { kind: 'reset' }
  /** Accept the request and never answer (a hung response). */
  | { kind: 'hang' };

/** A request as the server saw it. */
export type WireRequest = { method: string; path: string; headers: IncomingMessage['headers']; body: unknown };

export type WireServer = {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: WireRequest[];
  /** Requests that arrived with no reply queued (answered 599 so the test fails clearly). */
  readonly unexpected: WireRequest[];
  /** Queues replies, consumed one per request in order. */
  reply(...replies: WireReply[]): void;
  /** Resolves once `count` requests have arrived. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
};

/** Starts a local HTTP server on 127.0.0.1 that replays wire transcripts to the official clients. */
export async function startWireServer(): Promise<WireServer> {
  const queue: WireReply[] = [];
  const requests: WireRequest[] = [];
  const unexpected: WireRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters: { count: number; resolve: () => void }[] = [];

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const request: WireRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: parseBody(raw) };
      requests.push(request);
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const reply = queue.shift();
      if (reply === undefined) {
        unexpected.push(request);
        res.writeHead(599, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `wire server: no reply queued for ${request.method} ${request.path}` } }));
        return;
      }
      answer(reply, req, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unexpected,
    reply: (...replies) => void queue.push(...replies),
    received: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answer(reply: WireReply, req: IncomingMessage, res: ServerResponse): void {
  switch (reply.kind) {
    case 'json':
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body));
      return;
    case 'reset':
      req.socket.destroy();
      return;
    case 'hang':
      return;
    case 'sse': {
      const newline = reply.newline ?? '\n';
      res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers });
      res.flushHeaders();
      void (async () => {
        for (const [index, event] of reply.events.entries()) {
          if (reply.cutAfter === index) {
            // Let the client read what was sent, then cut the connection mid-stream.
            await pause();
            req.socket.destroy();
            return;
          }
          if (reply.hangAfter === index) return;
          res.write(frame(event, newline));
          // One event per write, with a turn of the event loop between: the client sees real chunks.
          await pause();
        }
        res.end();
      })();
      return;
    }
  }
}

function frame(event: SseEvent, newline: string): string {
  if (typeof event === 'string') return `data: ${event}${newline}${newline}`;
  return `${event.event !== undefined ? `event: ${event.event}${newline}` : ''}data: ${event.data}${newline}${newline}`;
}

function pause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
