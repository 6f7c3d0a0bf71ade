import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { afterEach } from 'vitest';
import { startInspector, type Inspector, type InspectorNotice, type InspectorOptions } from '../../src/inspect/index.js';

/** A fixed token, so tests can build URLs and headers by hand. */
export const TOKEN = 'test-token-0123456789abcdef';

const running: Inspector[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((inspector) => inspector.close()));
});

/** Starts an inspector that the test's `afterEach` closes; notices are collected, not printed. */
export async function inspect(options: InspectorOptions): Promise<Inspector & { notices: InspectorNotice[] }> {
  const notices: InspectorNotice[] = [];
  const inspector = await startInspector({ token: TOKEN, onNotice: (notice) => void notices.push(notice), ...options });
  running.push(inspector);
  return Object.assign(inspector, { notices });
}

export type Reply = { status: number; headers: IncomingHttpHeaders; text: string };

/**
 * One HTTP request with exactly the headers given (plus `Host: 127.0.0.1:<port>` unless given):
 * `fetch` would add or forbid some of them.
 */
export function send(port: number, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, agent: false, method: options.method ?? 'GET', path: options.path ?? '/', headers: { host: `127.0.0.1:${port}`, ...options.headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The headers of an authorized request from the page itself. */
export function pageHeaders(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return { 'x-troupe-token': TOKEN, origin: `http://127.0.0.1:${port}`, ...extra };
}

/** A POST /control from the page; resolves with the status and the JSON answer. */
export async function control(port: number, command: unknown): Promise<{ status: number; body: { ok?: true; error?: string } }> {
  const reply = await send(port, { method: 'POST', path: '/control', headers: pageHeaders(port, { 'content-type': 'application/json' }), body: JSON.stringify(command) });
  return { status: reply.status, body: JSON.parse(reply.text) as { ok?: true; error?: string } };
}

/** One SSE message as the wire carried it. */
export type Frame = { event: string; id: string | undefined; data: string; retry?: number };

/** An open `/events` stream, parsed frame by frame as it arrives. */
export type SseStream = {
  status: number;
  headers: IncomingHttpHeaders;
  frames: Frame[];
  /** The parsed `troupe` frames' envelopes. */
  events(): { id: string; type: string; v: number; data: Record<string, unknown>; agent?: string }[];
  /** Resolves once `test` holds for the frames received (checked on each new frame). */
  until(test: (frames: Frame[]) => boolean): Promise<Frame[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
};

/** Opens `/events` with the token header and whatever else is given (`last-event-id`…). */
export function openEvents(port: number, query = '', headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, agent: false, path: `/events${query}`, headers: { host: `127.0.0.1:${port}`, 'x-troupe-token': TOKEN, ...headers } },
      (res: IncomingMessage) => {
        const frames: Frame[] = [];
        const waiters: { test: (frames: Frame[]) => boolean; resolve: (frames: Frame[]) => void }[] = [];
        let buffer = '';
        let endStream!: () => void;
        const ended = new Promise<void>((done) => (endStream = done));
        const check = (): void => {
          for (const waiter of [...waiters]) {
            if (waiter.test(frames)) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve(frames);
            }
          }
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const frame: Frame = { event: 'message', id: undefined, data: '' };
            let hasFields = false;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              const colon = line.indexOf(': ');
              const field = line.slice(0, colon);
              const value = line.slice(colon + 2);
              hasFields = true;
              if (field === 'event') frame.event = value;
              else if (field === 'id') frame.id = value;
              else if (field === 'data') frame.data = value;
              else if (field === 'retry') frame.retry = Number(value);
            }
            if (hasFields) frames.push(frame);
          }
          check();
        });
        res.on('end', () => endStream());
        res.on('close', () => endStream());
        res.on('error', () => endStream());
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          frames,
          events: () => frames.filter((frame) => frame.event === 'troupe').map((frame) => JSON.parse(frame.data)),
          until: (test) =>
            new Promise((done) => {
              waiters.push({ test, resolve: done });
              check();
            }),
          ended,
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Frames of the `troupe` event type. */
export const troupeFrames = (frames: Frame[]): Frame[] => frames.filter((frame) => frame.event === 'troupe');
