// @ts-check
/**
 * The inspector's client: a live feed of bus events from a troupe inspector server, for the page
 * and for any panel of your own (browser or Node 20+, no build step). It speaks Server-Sent Events
 * over `fetch` + `ReadableStream` (Node has no EventSource, and EventSource cannot send headers),
 * reconnects with backoff, resumes with `Last-Event-ID`, and drops any event it already delivered.
 * Types: panel.d.ts. Guide: docs/ui-panels.md.
 */

import { errorMessage } from './error-message.js';

/** @typedef {import('./panel.js').PanelOptions<any>} Options */
/** @typedef {import('./panel.js').PanelStatus} PanelStatus */
/** @typedef {import('./panel.js').PanelGap} PanelGap */
/** @typedef {import('./panel.js').Panel} Panel */

const POLICIES = ['all', 'coalesce', 'sample', 'drop-oldest'];
/** Ids remembered for deduplication: a resume never reaches further back than this. */
const REMEMBERED_IDS = 10_000;
const DEFAULT_RETRY_MS = 1_000;
const DEFAULT_MAX_RETRY_MS = 15_000;
/** Refusals that retrying cannot fix: a bad request, a wrong token, no such route. */
const FATAL_STATUSES = new Set([400, 401, 403, 404, 405]);

/**
 * Connects to an inspector and calls `onEvent` with each bus event, in order, once.
 *
 * @example
 * const panel = connectPanel('http://127.0.0.1:4000/?token=…', {
 *   filter: { types: ['tool.*', 'agent.said'], agent: 'innkeeper' },
 *   onEvent: (event) => console.log(event.type, event.data),
 * });
 * panel.close();
 *
 * @param {string | URL} url The inspector's address: the URL troupe printed, or any page of it.
 * @param {Options} options
 * @returns {Panel}
 */
export function connectPanel(url, options) {
  if (options === null || typeof options !== 'object' || typeof options.onEvent !== 'function') {
    throw new TypeError('connectPanel(url, options) needs options.onEvent, a function');
  }
  if (options.policy !== undefined && !POLICIES.includes(options.policy)) {
    throw new TypeError(`connectPanel: policy must be one of ${POLICIES.join(', ')}; got ${JSON.stringify(options.policy)}`);
  }
  const base = new URL(String(url), globalThis.location?.href);
  const token = options.token ?? base.searchParams.get('token') ?? undefined;
  const eventsUrl = new URL('events', base);
  if (options.policy !== undefined) eventsUrl.searchParams.set('policy', options.policy);
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const accepts = eventFilter(options.filter);
  const seen = recentIds(REMEMBERED_IDS);
  const maxRetryMs = options.maxRetryMs ?? DEFAULT_MAX_RETRY_MS;
  let retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  /** @type {string | undefined} */
  let lastEventId;
  let closed = false;
  /** @type {AbortController | undefined} */
  let connection;
  /** @type {(() => void) | undefined} */
  let wake;

  /** @param {PanelStatus} status */
  const status = (status) => guard(() => options.onStatus?.(status), options);

  /** @param {{ event: string, data: string, id: string | undefined }} message */
  const dispatch = (message) => {
    if (message.event === 'troupe') {
      if (message.id !== undefined && seen.has(message.id)) return;
      /** @type {any} */
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return; // the server only sends JSON; anything else is not ours to show
      }
      if (message.id !== undefined) seen.add(message.id);
      if (accepts(event)) guard(() => options.onEvent(event), options);
    } else if (message.event === 'gap') {
      /** @type {PanelGap} */
      let gap = { missed: null };
      try {
        gap = JSON.parse(message.data);
      } catch {
        // a gap without details is still a gap
      }
      guard(() => options.onGap?.(gap), options);
    }
  };

  const run = async () => {
    let attempt = 0;
    while (!closed) {
      if (attempt === 0) status({ state: 'connecting' });
      /** @type {string} */
      let problem;
      try {
        connection = new AbortController();
        /** @type {Record<string, string>} */
        const headers = { Accept: 'text/event-stream' };
        if (token !== undefined) headers['X-Troupe-Token'] = token;
        if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
        const response = await fetchImpl(eventsUrl, { headers, signal: connection.signal, cache: 'no-store', credentials: 'same-origin' });
        if (!response.ok || response.body === null) {
          const reason = (await response.text().catch(() => '')).slice(0, 200);
          if (FATAL_STATUSES.has(response.status)) {
            closed = true;
            status({ state: 'failed', status: response.status, error: reason || `the server answered ${response.status}` });
            return;
          }
          throw new Error(`the server answered ${response.status}${reason === '' ? '' : `: ${reason}`}`);
        }
        attempt = 0;
        status({ state: 'open' });
        await readEvents(response.body, {
          onMessage: dispatch,
          onId: (id) => (lastEventId = id),
          onRetry: (ms) => {
            if (options.retryMs === undefined) retryMs = ms;
          },
        });
        problem = 'the server ended the stream';
      } catch (error) {
        if (closed) break;
        problem = errorMessage(error);
      }
      if (closed) break;
      attempt++;
      const delay = Math.min(maxRetryMs, retryMs * 2 ** Math.min(attempt - 1, 16));
      status({ state: 'reconnecting', attempt, retryInMs: delay, error: problem });
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve(undefined);
        };
      });
      wake = undefined;
    }
  };
  void run().finally(() => {
    if (closed) status({ state: 'closed' });
  });

  return {
    close() {
      if (closed) return;
      closed = true;
      connection?.abort();
      wake?.();
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}

/**
 * Reads an SSE body to its end: fields per the HTML standard (`event`, `data`, `id`, `retry`,
 * comments), any of the three line endings, chunks split anywhere, even inside a character.
 *
 * @param {ReadableStream<Uint8Array>} body
 * @param {{ onMessage: (message: { event: string, data: string, id: string | undefined }) => void, onId: (id: string) => void, onRetry: (ms: number) => void }} handlers
 */
async function readEvents(body, handlers) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data = '';
  let hasData = false;
  /** The id field of the message being read, if it has one. */
  /** @type {string | undefined} */
  let id;
  /** @param {string} line */
  const onLine = (line) => {
    if (line === '') {
      // The id becomes the last id once its message is whole: a stream cut mid-message resumes before it.
      if (id !== undefined) handlers.onId(id);
      if (hasData) handlers.onMessage({ event: event === '' ? 'message' : event, data, id });
      event = '';
      data = '';
      hasData = false;
      id = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') {
      data = hasData ? `${data}\n${value}` : value;
      hasData = true;
    } else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) handlers.onRetry(Number(value));
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = 0;
      for (let index = 0; index < buffer.length; index++) {
        const char = buffer[index];
        if (char !== '\n' && char !== '\r') continue;
        // A CR at the end of a chunk may be the first half of a CRLF: wait for the next chunk.
        if (char === '\r' && index === buffer.length - 1 && !done) break;
        onLine(buffer.slice(start, index));
        if (char === '\r' && buffer[index + 1] === '\n') index++;
        start = index + 1;
      }
      buffer = buffer.slice(start);
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * The filter as a test of envelopes: patterns as `bus.on` takes them (`'tool.started'`,
 * `'tool.*'`, `'*'`), and an agent and a scene name.
 *
 * @param {Options['filter']} filter
 * @returns {(event: { type?: unknown, agent?: unknown, scene?: unknown }) => boolean}
 */
function eventFilter(filter) {
  if (filter === undefined) return () => true;
  // The rules of `patternMatcher` (src/bus/pattern-match.ts), which this page cannot import: `'*'`,
  // `'prefix.*'`, and anything else an exact type.
  const patterns = filter.types ?? ['*'];
  const all = patterns.includes('*');
  const prefixes = patterns.filter((pattern) => pattern.endsWith('.*')).map((pattern) => pattern.slice(0, -1));
  const exact = new Set(patterns.filter((pattern) => pattern !== '*' && !pattern.endsWith('.*')));
  return (event) => {
    if (filter.agent !== undefined && event.agent !== filter.agent) return false;
    if (filter.scene !== undefined && event.scene !== filter.scene) return false;
    if (all) return true;
    const type = String(event.type);
    return exact.has(type) || prefixes.some((prefix) => type.startsWith(prefix));
  };
}

/**
 * A set of the last `size` ids added.
 *
 * @param {number} size
 */
function recentIds(size) {
  /** @type {Set<string>} */
  const ids = new Set();
  return {
    /** @param {string} id */
    has: (id) => ids.has(id),
    /** @param {string} id */
    add(id) {
      ids.add(id);
      // Sets iterate in insertion order: the first is the oldest.
      if (ids.size > size) ids.delete(/** @type {string} */ (ids.values().next().value));
    },
  };
}

/**
 * Runs a caller's callback; what it throws goes to `onError` (default: the console), never into
 * the stream, so one bad render cannot cut the feed.
 *
 * @param {() => void} callback
 * @param {Options} options
 */
function guard(callback, options) {
  try {
    callback();
  } catch (error) {
    if (options.onError !== undefined) options.onError(error);
    else console.error('troupe panel: a callback threw', error);
  }
}
