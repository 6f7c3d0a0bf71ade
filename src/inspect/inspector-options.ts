import type { Agent } from '../agent/agent-options.js';
import type { BackpressurePolicy } from '../bus/event-queue.js';
import type { Bus } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import type { Scene } from '../scene/types.js';
import type { EventHistory } from './event-history.js';
import type { TickGate } from './tick-gate.js';

/** How `startInspector` is told what to serve and where. Give a live source or a log, not both. */
export type InspectorOptions = {
  /** A live bus (default: `scene.bus`). */
  bus?: Bus;
  /** A log's events (`readLog(path).events`): served read-only, mode `log`. */
  events?: Iterable<Envelope>;
  /**
   * The events to replay (default: a new `createEventHistory(bus)`, which sees only what is
   * published from now on). Pass the same history to a restarted server: clients resume from it.
   */
  history?: EventHistory;
  /** The scene behind `/state` and the controls. */
  scene?: Scene;
  /** Agents outside a scene that `/control` may approve and deny calls for. */
  agents?: readonly Agent[];
  /** The tick gate the scene's runner awaits: what makes pause, resume and step work. */
  gate?: TickGate;
  /** TCP port; 0 (the default) takes any free one. */
  port?: number;
  /** Address to bind (default `127.0.0.1`). Anything but loopback is warned about. */
  host?: string;
  /** The access token (default: 32 random bytes, hex). At least 16 URL-safe characters. */
  token?: string;
  /** More `Host` values to accept, e.g. a name of this machine (`'devbox:4000'`, or `'devbox'` for any port of ours). */
  allowedHosts?: readonly string[];
  /** Events waiting per SSE client before a client that stopped reading is dropped (default 10,000). */
  queue?: number;
  /** Each client's policy when it does not ask for one with `?policy=` (default `all`). */
  policy?: BackpressurePolicy;
  /** Characters of one event's JSON on the wire; bigger data is replaced by a `$truncated` preview (default 262,144). */
  maxEventChars?: number;
  /** Extra secrets to hide in what is served, besides secret-looking keys and `*_API_KEY`-style env values. */
  redact?: readonly (string | RegExp)[];
  /** Milliseconds between SSE heartbeat comments (default 15,000). */
  heartbeatMs?: number;
  /**
   * The folder served as the page (`/` is its `index.html`, `/assets/<file>` its files); default
   * troupe's own page. Point it at your own panel to serve that instead, under the same guards.
   */
  pageDir?: string;
  /** Warnings and dropped clients (default: warnings and drops printed to stderr). */
  onNotice?: (notice: InspectorNotice) => void;
};

/** Something the host should know about the server. */
export type InspectorNotice =
  /** Bound to an address beyond loopback. */
  | { kind: 'exposed'; host: string; message: string }
  /** An SSE client stopped reading and its queue filled: it was disconnected (it may resume). */
  | { kind: 'client_dropped'; policy: BackpressurePolicy; max: number; message: string };

/** A running inspector server. */
export type Inspector = {
  /** The page's address, with the token: what to open in a browser. */
  url: string;
  port: number;
  token: string;
  /** Ends every stream, stops listening; resolves once the port is free. The history stays. */
  close(): Promise<void>;
};

/** What `GET /state` answers. */
export type InspectorState = {
  mode: 'live' | 'log';
  scene: string | null;
  clock: Scene['clockMode'] | null;
  paused: boolean;
  /**
   * Whether the scene has started and stopped: a live scene says so itself (a history that no
   * longer holds `scene.started` cannot); a log or a bare bus, from its `scene.*` events. A
   * segment stopped from outside and then resumed is not stopped: the resume goes on with it.
   */
  started: boolean;
  stopped: boolean;
  /** True when `/control` can act: a live scene or agents were given. */
  canControl: boolean;
  /**
   * Each agent: its machine state, the turns it took and how its last run ended — a live scene's
   * own count, or every event seen (evicted from the history or not) for a log or a bare bus.
   */
  agents: { name: string; state: string; turns: number; lastReason?: string }[];
  world: unknown;
  tick: number;
  /**
   * A log only: how it ends. `closed` when its run ended and the log says so (`scene.stopped`,
   * or every agent's run finished); `interrupted` when the writer stopped without closing it —
   * the process was killed or crashed (or it is still writing): `stopped` is then false, and
   * `troupe resume` can continue the run.
   */
  ended?: 'closed' | 'interrupted';
  /** A log only: the events it holds. */
  events?: number;
  /**
   * A log only: where it was resumed (each `log.opened` of kind `resume`), in order: the event,
   * the tick the run had reached when it was taken up again, and the checkpoint's tick it
   * replayed from (0 without a checkpoint).
   */
  resumes?: { id: string; run: string; tick: number; fromTick: number; checkpoint?: number }[];
};

/** What `POST /control` takes. */
export type ControlCommand =
  /**
   * Runs a call waiting for approval. `args`, when given, are the arguments the approver saw, and
   * `argsHash` the request's digest of them: the approval holds only if they are still the call's
   * (the page always sends the hash, and the arguments when its card shows them). A request too
   * large to stream (a `$truncated` card) is approved only with its `argsHash`.
   */
  | { type: 'approve'; agent: string; callId: string; args?: Record<string, unknown>; argsHash?: string }
  | { type: 'deny'; agent: string; callId: string; reason?: string }
  /**
   * Lets a result held by `needsResultApproval` reach the model. `outputHash`, when given, binds
   * the approval to the request's digest of the output; a request too large to stream needs it.
   */
  | { type: 'approveResult'; agent: string; callId: string; outputHash?: string }
  /** Withholds a held result: the model is told `RESULT_REJECTED` with the reason. */
  | { type: 'rejectResult'; agent: string; callId: string; reason?: string }
  | { type: 'pause' }
  | { type: 'resume' }
  | { type: 'step' };
