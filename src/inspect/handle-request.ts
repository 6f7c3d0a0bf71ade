import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Agent } from '../agent/agent-options.js';
import { POLICIES, type BackpressurePolicy } from '../bus/event-queue.js';
import { safeJson } from '../bus/safe-json.js';
import type { Scene } from '../scene/types.js';
import { parseControlCommand, runControlCommand } from './control-command.js';
import type { EventHistory } from './event-history.js';
import { openEventStream, type EventStream, type StreamContext } from './event-stream.js';
import { readJsonBody, SECURITY_HEADERS, sendJson, sendText } from './http-reply.js';
import { fetchSiteProblem, hostProblem, originProblem, tokenCookie, tokenSource, type Allowlist } from './request-guard.js';
import { stateSnapshot } from './state-snapshot.js';
import { readPageFile } from './static-files.js';
import type { TickGate } from './tick-gate.js';
import { errorMessage } from '../errors.js';

/** Everything a request may need, fixed once the server listens. */
export type InspectorContext = {
  allow: Allowlist;
  mode: 'live' | 'log';
  scene: Scene | undefined;
  agents: ReadonlyMap<string, Agent>;
  gate: TickGate | undefined;
  history: EventHistory;
  defaultPolicy: BackpressurePolicy;
  stream: StreamContext;
  streams: Set<EventStream>;
  /** The page's folder. */
  pageDir: string;
};

/**
 * `POST /control` bodies are small commands, but an approval carries the call's arguments back:
 * up to `maxActionChars` (256 Ki characters), which JSON escapes can make six bytes each.
 */
const MAX_BODY_BYTES = 2 * 1024 * 1024;
const MAX_EVENT_ID = 512;

/** The token-guarded routes and the methods they take. */
const ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/': ['GET', 'HEAD'],
  '/events': ['GET'],
  '/state': ['GET', 'HEAD'],
  '/control': ['POST'],
};

/**
 * The server's request handler. Order of checks: `Host` (DNS rebinding), `Origin` (another site;
 * required for commands), the route, `Sec-Fetch-Site` for the API, then the token. Every refusal
 * is a 403 with a short plain-text reason.
 */
export function createRequestHandler(context: () => InspectorContext | undefined): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    route(req, res, context()).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendText(res, 500, `internal error: ${errorMessage(error)}`);
    });
  };
}

async function route(req: IncomingMessage, res: ServerResponse, context: InspectorContext | undefined): Promise<void> {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  if (context === undefined) return sendText(res, 503, 'the inspector is starting');
  const host = hostProblem(req, context.allow);
  if (host !== undefined) return sendText(res, 403, host);
  const method = req.method ?? 'GET';
  const origin = originProblem(req, context.allow, method !== 'GET' && method !== 'HEAD');
  if (origin !== undefined) return sendText(res, 403, origin);
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://inspector.invalid');
  } catch {
    return sendText(res, 400, 'bad request target');
  }

  if (url.pathname.startsWith('/assets/')) {
    if (method !== 'GET' && method !== 'HEAD') return sendText(res, 405, 'assets are read with GET', { Allow: 'GET, HEAD' });
    const file = await readPageFile(url.pathname.slice('/assets/'.length), context.pageDir);
    if (!file.ok) return sendText(res, file.status, file.reason);
    res.writeHead(200, { 'Content-Type': file.contentType, 'Content-Length': file.body.length });
    return void res.end(file.body);
  }
  const methods = Object.hasOwn(ROUTES, url.pathname) ? ROUTES[url.pathname] : undefined;
  if (methods === undefined) return sendText(res, 404, `not found: ${url.pathname.slice(0, 100)}`);
  if (!methods.includes(method)) return sendText(res, 405, `${url.pathname} takes ${methods.join(' or ')}`, { Allow: methods.join(', ') });
  // The page may be opened from a link anywhere; its API is for the page itself.
  if (url.pathname !== '/') {
    const site = fetchSiteProblem(req);
    if (site !== undefined) return sendText(res, 403, site);
  }
  const source = tokenSource(req, url, context.allow.token);
  if (source === undefined) {
    const given = url.searchParams.has('token') || req.headers['x-troupe-token'] !== undefined;
    return sendText(res, 403, given ? 'wrong token' : 'token required: open the URL troupe printed (…/?token=…)');
  }

  switch (url.pathname) {
    case '/':
      return servePage(res, context.pageDir, source === 'query' ? context.allow.token : undefined);
    case '/events':
      return serveEvents(req, res, url, context);
    case '/state': {
      const state = stateSnapshot({ ...context, events: () => context.history.events(), summaries: () => context.history.agents() });
      return sendJson(res, 200, safeJson(state, { redactor: context.stream.redactor }).text);
    }
    default:
      return control(req, res, context);
  }
}

async function servePage(res: ServerResponse, pageDir: string, setCookieFor: string | undefined): Promise<void> {
  let body: Buffer;
  try {
    body = await readFile(join(pageDir, 'index.html'));
  } catch {
    return sendText(res, 404, `the inspector page is missing (${join(pageDir, 'index.html')}); the API still answers`);
  }
  const headers: Record<string, string | number> = { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length };
  if (setCookieFor !== undefined) headers['Set-Cookie'] = tokenCookie(setCookieFor);
  res.writeHead(200, headers);
  res.end(body);
}

function serveEvents(req: IncomingMessage, res: ServerResponse, url: URL, context: InspectorContext): void {
  const asked = url.searchParams.get('policy');
  if (asked !== null && !POLICIES.includes(asked as BackpressurePolicy)) {
    return sendText(res, 400, `policy must be one of ${POLICIES.join(', ')}; got ${JSON.stringify(asked.slice(0, 40))}`);
  }
  const header = req.headers['last-event-id'];
  const lastEventId = (typeof header === 'string' && header !== '' ? header : undefined) ?? (url.searchParams.get('lastEventId') || undefined);
  if (lastEventId !== undefined && lastEventId.length > MAX_EVENT_ID) return sendText(res, 400, `Last-Event-ID is longer than ${MAX_EVENT_ID} characters`);
  const stream = openEventStream(req, res, context.stream, { lastEventId, policy: (asked as BackpressurePolicy | null) ?? context.defaultPolicy });
  context.streams.add(stream);
  void stream.closed.then(() => context.streams.delete(stream));
}

async function control(req: IncomingMessage, res: ServerResponse, context: InspectorContext): Promise<void> {
  const body = await readJsonBody(req, MAX_BODY_BYTES);
  if (!body.ok) {
    // A body too big is not read to its end: answer, then close the connection.
    if (body.problem.status === 413) res.setHeader('Connection', 'close');
    sendJson(res, body.problem.status, JSON.stringify({ error: body.problem.error }));
    if (body.problem.status === 413) res.once('finish', () => req.destroy());
    return;
  }
  const command = parseControlCommand(body.value);
  if (!command.ok) return sendJson(res, command.problem.status, JSON.stringify({ error: command.problem.error }));
  const done = runControlCommand(command.value, context);
  if (!done.ok) return sendJson(res, done.problem.status, JSON.stringify({ error: done.problem.error }));
  sendJson(res, 200, '{"ok":true}');
}
