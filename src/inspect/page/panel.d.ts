import type { Envelope, EnvelopeOf, Pattern } from '../../bus/events.js';
import type { AgentSummary } from '../agent-tally.js';

/**
 * What a panel shows: event types as `bus.on` takes them (an exact type, `'prefix.*'`, `'*'`),
 * and one agent and/or one scene. Filtering happens in the client; resume covers every event.
 */
export type PanelFilter<P extends Pattern = Pattern> = { types?: readonly P[]; agent?: string; scene?: string };

/**
 * How the server feeds this client when it falls behind (docs/ui-panels.md): `all` (default),
 * `coalesce` (streamed text merged), `sample` (only the latest state events), `drop-oldest`.
 */
export type PanelPolicy = 'all' | 'coalesce' | 'sample' | 'drop-oldest';

/**
 * Events this client will not get: the history no longer held them (`history`), or the chosen
 * policy dropped them. `missed` is a count when known; `kept` is how many events the server's
 * history holds. A client that connects after the history evicted events (a page opened late) gets
 * `earlier`: each agent as those events left it (state, turns, last reason, counts), to count on
 * from with the events that follow.
 */
export type PanelGap = { missed: number | null; reason?: 'history' | PanelPolicy; kept?: number; earlier?: AgentSummary[] };

export type { AgentSummary } from '../agent-tally.js';

/** Where the connection is. `failed` is final (a refusal, e.g. a wrong token); `closed` follows `close()`. */
export type PanelStatus =
  | { state: 'connecting' }
  | { state: 'open' }
  | { state: 'reconnecting'; attempt: number; retryInMs: number; error: string }
  | { state: 'failed'; status: number; error: string }
  | { state: 'closed' };

/** An event as the server sends it: the bus envelope plus `v`, the catalogue version. */
export type PanelEvent<P extends Pattern = '*'> = EnvelopeOf<P> & { v: number };

export type PanelOptions<P extends Pattern = '*'> = {
  /** The token; default: the `token` in `url`, else the page's cookie (same origin only). */
  token?: string;
  filter?: PanelFilter<P>;
  policy?: PanelPolicy;
  /** Each event, in order, once (deduplicated by id across reconnects). */
  onEvent: (event: PanelEvent<P>) => void;
  onGap?: (gap: PanelGap) => void;
  onStatus?: (status: PanelStatus) => void;
  /** A callback threw (default: logged to the console); the feed goes on. */
  onError?: (error: unknown) => void;
  /** First reconnect delay in ms, doubled per failed attempt (default: the server's `retry`, 1000). */
  retryMs?: number;
  /** Longest reconnect delay in ms (default 15,000). */
  maxRetryMs?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
};

/** A connected panel. */
export type Panel = {
  /** Disconnects for good; no callback runs after the `closed` status. */
  close(): void;
  /** The id of the last event received, what a reconnect resumes after. */
  readonly lastEventId: string | undefined;
};

/**
 * Connects to a troupe inspector and calls `onEvent` with each bus event, in order, once:
 * SSE over `fetch`, reconnecting with backoff and resuming with `Last-Event-ID`. Works in browsers
 * and in Node 20+.
 *
 * @example
 * import { connectPanel } from 'troupe/panel';
 * const panel = connectPanel('http://127.0.0.1:4000/?token=…', {
 *   filter: { types: ['tool.*'], agent: 'innkeeper' },
 *   onEvent: (event) => console.log(event.type, event.data.name),
 * });
 */
export function connectPanel<P extends Pattern = '*'>(url: string | URL, options: PanelOptions<P>): Panel;

export type { Envelope, Pattern };
