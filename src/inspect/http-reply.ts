import type { IncomingMessage, ServerResponse } from 'node:http';
import { failure, success, type Outcome } from '../outcome.js';

/**
 * Headers on every answer. The page has no inline script or style, so the policy can forbid
 * both; nothing is cached (the token is in the URL) and nothing is framed or embedded elsewhere.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; connect-src 'self'; script-src 'self'; style-src 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** A short plain-text answer: refusals and errors. */
export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** A JSON answer from text that already is JSON. */
export function sendJson(res: ServerResponse, status: number, json: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

/** A refusal of a request body: its status and message. */
export type BodyProblem = { status: 400 | 413 | 415; error: string };

/**
 * Reads a JSON request body of at most `limit` bytes. A bigger one is refused before it is read
 * whole (the connection is closed after the answer, so the rest is never read).
 */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<Outcome<unknown, BodyProblem>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    req.resume();
    return Promise.resolve(failure({ status: 415, error: 'the body must be JSON (Content-Type: application/json)' }));
  }
  const tooBig = failure<BodyProblem>({ status: 413, error: `the body is larger than ${limit} bytes` });
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.resolve(tooBig);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: Outcome<unknown, BodyProblem>): void => {
      req.removeAllListeners('data');
      req.removeAllListeners('end');
      resolve(outcome);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish(tooBig);
      chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        finish(success(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown));
      } catch (error) {
        finish(failure({ status: 400, error: `the body is not JSON: ${(error as Error).message}` }));
      }
    });
    req.on('error', () => finish(failure({ status: 400, error: 'the request was cut short' })));
  });
}
