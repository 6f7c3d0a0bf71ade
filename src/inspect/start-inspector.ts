import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from '../agent/agent-options.js';
import type { Bus } from '../bus/bus.js';
import { resolveBackpressure, type BackpressurePolicy } from '../bus/event-queue.js';
import { ConfigError, TroupeError } from '../errors.js';
import { createEventWriter } from '../record/plain-json.js';
import { createRedactor } from '../record/redact.js';
import { createEventHistory, type EventHistory } from './event-history.js';
import type { EventStream, StreamContext } from './event-stream.js';
import type { Inspector, InspectorNotice, InspectorOptions } from './inspector-options.js';
import { createRequestHandler, type InspectorContext } from './handle-request.js';
import { createAllowlist, isLoopback, isWildcard, urlHost } from './request-guard.js';
import { PAGE_DIR } from './static-files.js';

export type { Inspector, InspectorNotice, InspectorOptions, InspectorState, ControlCommand } from './inspector-options.js';

const DEFAULT_QUEUE = 10_000;
const DEFAULT_MAX_EVENT_CHARS = 262_144;
const DEFAULT_HEARTBEAT_MS = 15_000;
const CLOSE_GRACE_MS = 1_000;
const TOKEN_SHAPE = /^[A-Za-z0-9._~-]{16,512}$/;

/**
 * Starts the inspector: a local HTTP server with the page, the bus as Server-Sent Events, the
 * scene's state and, for a live scene, approve/deny/pause/resume/step. It binds 127.0.0.1, checks
 * `Host` and `Origin`, and wants the token on everything but the page's static files (see
 * docs/inspector.md). Rejects with a clear error when the port cannot be had.
 *
 * @example
 * const history = createEventHistory(scene.bus);
 * const gate = createTickGate(scene);
 * const inspector = await startInspector({ scene, history, gate, port: 4000 });
 * console.error(`inspector: ${inspector.url}`);
 * await scene.run({ ticks: 50, beforeTick: gate.beforeTick });
 * await inspector.close();
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const config = resolveOptions(options);
  const notify = options.onNotice ?? printNotice;
  const streams = new Set<EventStream>();
  const redactor = createRedactor({ secrets: [...(options.redact ?? []), config.token] });
  const stream: StreamContext = {
    history: config.history,
    queue: config.queue,
    redactor,
    line: createEventWriter(redactor, config.maxEventChars),
    maxEventChars: config.maxEventChars,
    notify,
    frames: new WeakMap(),
    clients: () => streams.size,
  };
  let context: InspectorContext | undefined;
  const handle = createRequestHandler(() => context);
  const server = createServer((req, res) => handle(req, res));
  await listen(server, config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  context = {
    allow: createAllowlist(port, config.host, options.allowedHosts ?? [], config.token),
    mode: config.mode,
    scene: options.scene,
    agents: config.agents,
    gate: options.gate,
    history: config.history,
    defaultPolicy: config.policy,
    stream,
    streams,
    pageDir: options.pageDir ?? PAGE_DIR,
  };
  if (!isLoopback(config.host)) {
    notify({
      kind: 'exposed',
      host: config.host,
      message: `troupe inspector: listening on ${urlHost(config.host)}:${port}, beyond this machine: anyone who can reach it and has the token can watch the scene and approve tool calls. Bind 127.0.0.1 (the default) unless you mean it.`,
    });
  }
  const heartbeat = setInterval(() => {
    for (const open of streams) open.heartbeat();
  }, config.heartbeatMs);
  heartbeat.unref();

  let closing: Promise<void> | undefined;
  const shownHost = isWildcard(config.host) ? '127.0.0.1' : urlHost(config.host);
  return {
    url: `http://${shownHost}:${port}/?token=${config.token}`,
    port,
    token: config.token,
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        const ended = [...streams].map((open) => open.closed);
        for (const open of streams) open.end();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Streams end cleanly when their clients read the end; one that does not is cut after a moment.
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([Promise.all(ended), new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
        clearTimeout(timer);
        server.closeAllConnections();
        await stopped;
        if (config.ownsHistory) config.history.detach();
      })();
      return closing;
    },
  };
}

type Resolved = {
  mode: 'live' | 'log';
  history: EventHistory;
  ownsHistory: boolean;
  agents: ReadonlyMap<string, Agent>;
  port: number;
  host: string;
  token: string;
  queue: number;
  policy: BackpressurePolicy;
  maxEventChars: number;
  heartbeatMs: number;
};

/** Checks the options eagerly: each problem is a ConfigError that names the option. */
function resolveOptions(options: InspectorOptions): Resolved {
  if (options === null || typeof options !== 'object') throw new ConfigError('startInspector(options) takes an object');
  const { events, history, scene, gate } = options;
  const bus: Bus | undefined = options.bus ?? scene?.bus;
  if (events !== undefined && (bus !== undefined || history !== undefined || gate !== undefined || options.agents !== undefined)) {
    throw new ConfigError('startInspector: `events` (a log) is served read-only; give it alone, without bus, scene, history, gate or agents');
  }
  if (events === undefined && bus === undefined && history === undefined) {
    throw new ConfigError('startInspector needs something to serve: `bus` (or `scene`), `history`, or a log\'s `events`');
  }
  const port = options.port ?? 0;
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535) throw new ConfigError(`startInspector: port must be an integer from 0 to 65535 (0: any free port), got ${String(port)}`);
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.trim() === '') throw new ConfigError('startInspector: host must be a non-empty string, e.g. 127.0.0.1');
  const token = options.token ?? randomBytes(32).toString('hex');
  if (typeof token !== 'string' || !TOKEN_SHAPE.test(token)) {
    throw new ConfigError('startInspector: token must be 16 to 512 URL-safe characters (letters, digits, . _ ~ -); leave it out for a random one');
  }
  const queue = options.queue ?? DEFAULT_QUEUE;
  if (!Number.isSafeInteger(queue) || queue < 1) throw new ConfigError(`startInspector: queue must be a positive integer, got ${String(queue)}`);
  const policy = options.policy ?? 'all';
  resolveBackpressure({ policy, max: queue } as never);
  const maxEventChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  if (!Number.isSafeInteger(maxEventChars) || maxEventChars < 1_024) throw new ConfigError(`startInspector: maxEventChars must be an integer of at least 1024, got ${String(maxEventChars)}`);
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  if (!(Number.isFinite(heartbeatMs) && heartbeatMs > 0)) throw new ConfigError(`startInspector: heartbeatMs must be a number > 0, got ${String(heartbeatMs)}`);
  const agents = new Map<string, Agent>();
  for (const agent of options.agents ?? []) {
    if (agents.has(agent.name)) throw new ConfigError(`startInspector: two agents are named ${JSON.stringify(agent.name)}`);
    agents.set(agent.name, agent);
  }
  const own = history === undefined;
  const held = history ?? (events !== undefined ? createEventHistory(events) : createEventHistory(bus!));
  const mode = events !== undefined || (bus === undefined && !held.live) ? 'log' : 'live';
  return { mode, history: held, ownsHistory: own, agents, port, host, token, queue, policy, maxEventChars, heartbeatMs };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => {
      const where = `${urlHost(host)}:${port}`;
      const why =
        error.code === 'EADDRINUSE'
          ? `port ${port} is in use; choose another, or 0 for any free port`
          : error.code === 'EACCES'
            ? `not allowed to listen on ${where} (ports below 1024 need privileges)`
            : error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND'
              ? `${host} is not an address of this machine`
              : error.message;
      reject(new TroupeError('invalid_config', `inspector cannot listen on ${where}: ${why}`, { cause: error }));
    };
    server.once('error', failed);
    server.listen({ port, host }, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/** The default `onNotice`: one line on stderr. */
function printNotice(notice: InspectorNotice): void {
  process.stderr.write(`${notice.message}\n`);
}
