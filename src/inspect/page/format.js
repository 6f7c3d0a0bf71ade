// @ts-check
/**
 * Text for values and events: short, one-line, and safe to hand to `textContent`. Pure, so the
 * timeline, the transcript and the tests describe an event the same way.
 */

/** @typedef {import('./model.js').Envelope} Envelope */

/** Longest value shown inline; the event's detail view has the whole of it. */
const BRIEF_CHARS = 140;

/** What each machine state is called on the page. */
export const STATE_LABELS = /** @type {Record<string, string>} */ ({
  idle: 'idle',
  deliberating: 'deliberating',
  parsing: 'parsing',
  validating: 'validating',
  repairing: 'repairing',
  awaitingApproval: 'awaiting approval',
  dispatching: 'dispatching',
  awaitingResultApproval: 'awaiting result approval',
  observing: 'observing',
  done: 'done',
  failed: 'failed',
});

/**
 * A state's label (`awaitingApproval` → `awaiting approval`); unknown states as they are.
 *
 * @param {string} state
 */
export function stateLabel(state) {
  return Object.hasOwn(STATE_LABELS, state) ? /** @type {string} */ (STATE_LABELS[state]) : state;
}

/**
 * JSON for any value, never throwing: cycles, BigInt and functions become placeholders.
 *
 * @param {unknown} value
 * @param {number} [indent]
 */
export function json(value, indent) {
  if (value === undefined) return 'undefined';
  const seen = new WeakSet();
  try {
    return (
      JSON.stringify(
        value,
        (_key, item) => {
          if (typeof item === 'bigint') return `${item}n`;
          if (typeof item === 'function') return '[function]';
          if (typeof item === 'object' && item !== null) {
            if (seen.has(item)) return '[circular]';
            seen.add(item);
          }
          return item;
        },
        indent,
      ) ?? String(value)
    );
  } catch {
    return '[unserializable]';
  }
}

/**
 * `text` cut to `limit` characters with an ellipsis.
 *
 * @param {string} text
 * @param {number} [limit]
 */
export function clip(text, limit = BRIEF_CHARS) {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/**
 * A value on one line: strings as they are, everything else as compact JSON.
 *
 * @param {unknown} value
 * @param {number} [limit]
 */
export function brief(value, limit = BRIEF_CHARS) {
  const text = typeof value === 'string' ? value : json(value);
  return clip(text.replace(/\s+/g, ' '), limit);
}

/**
 * A tool's output for the page: a rich result (`{ parts }` on the bus, `{ $parts }` in a log) as
 * its text, its JSON and one `[image: image/png, 12.3 KB]` placeholder per image, never the bytes.
 * Any other output is returned as it is.
 *
 * @param {unknown} output
 */
export function resultText(output) {
  if (typeof output !== 'object' || output === null) return output;
  const record = /** @type {{ parts?: unknown, $parts?: unknown }} */ (output);
  const parts = Array.isArray(record.$parts) ? record.$parts : record.parts;
  if (!Array.isArray(parts)) return output;
  return parts
    .map((part) => {
      const item = typeof part === 'object' && part !== null ? /** @type {Record<string, unknown>} */ (part) : {};
      if (item.type === 'text') return String(item.text);
      if (item.type === 'json') return json(item.value);
      if (item.type === 'image') return `[image: ${String(item.mediaType)}, ${size(item.bytes)}]`;
      return '[unknown part]';
    })
    .join(' ');
}

/** @param {unknown} bytes */
function size(bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '? bytes';
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * A call as `name(key: value, …)`.
 *
 * @param {string} name
 * @param {unknown} args
 */
export function callText(name, args) {
  if (typeof args !== 'object' || args === null) return `${name}()`;
  const parts = Object.entries(args).map(([key, value]) => `${key}: ${brief(value, 60)}`);
  return `${name}(${clip(parts.join(', '), BRIEF_CHARS)})`;
}

/**
 * A duration in ms as `4 ms`, `1.2 s`, `2 m 5 s`.
 *
 * @param {number | undefined} ms
 */
export function duration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} m ${Math.round((ms % 60_000) / 1000)} s`;
}

/**
 * One line about an event for the timeline: what happened, without the type and agent the row
 * already shows.
 *
 * @param {Envelope} event
 * @param {number} [tick] the tick the event came at (a resume says where it took up)
 * @returns {string}
 */
export function summarize(event, tick) {
  const data = /** @type {any} */ (event.data ?? {});
  switch (event.type) {
    case 'agent.spawned':
      return `tools: ${(data.tools ?? []).join(', ')}`;
    case 'agent.state':
      return `${stateLabel(data.from)} → ${stateLabel(data.to)}`;
    case 'agent.triggered':
      return `${data.reason}${data.detail ? ` (${data.detail})` : ''}`;
    case 'llm.request':
      return `round ${data.round} · ${data.provider}${data.model ? `/${data.model}` : ''} · ${data.messageCount} messages${data.nudge ? ' · nudge' : ''}`;
    case 'llm.delta':
      return brief(data.text);
    case 'llm.response':
      return `round ${data.round} · ${data.finishReason} · ${duration(data.latencyMs)} · ${brief(data.text, 90)}`;
    case 'llm.error':
      return `${data.kind}, attempt ${data.attempt}${data.retryable ? ', will retry' : ''}: ${brief(data.message)}`;
    case 'agent.said':
      return `${data.to ? `→ ${data.to}: ` : ''}${brief(data.text)}`;
    case 'action.parsed':
      return (data.calls ?? []).map((/** @type {any} */ item) => callText(item.name, item.args)).join(' · ');
    case 'action.malformed':
      return `${data.code}: ${brief(data.message)}`;
    case 'action.trailing':
      return brief(data.text);
    case 'tool.rejected':
      return `${data.name} ${data.code}: ${brief(data.message)}`;
    case 'tool.approval.requested':
      return `${callText(data.name, data.args)} waits for approval`;
    case 'tool.approval.resolved':
      return `${data.name} ${data.approved ? 'approved' : 'denied'}${data.reason ? `: ${data.reason}` : ''}`;
    case 'tool.result.approval.requested':
      return `${data.name} → ${brief(data.output, 80)} waits for approval`;
    case 'tool.result.approval.resolved':
      return `${data.name} result ${data.approved ? 'approved' : 'rejected'}${data.reason ? `: ${data.reason}` : ''}`;
    case 'tool.repaired':
      return `${callText(data.before?.name, data.before?.args)} repaired by ${data.by} as ${callText(data.after?.name, data.after?.args)}`;
    case 'tool.repair.failed':
      return `${data.name} not repaired (${data.by}): ${brief(data.reason)}`;
    case 'tool.started':
      return `${callText(data.name, data.args)}${data.attempt > 1 ? ` · attempt ${data.attempt}` : ''}`;
    case 'tool.completed':
      return `${data.name} → ${brief(data.parts === undefined ? data.output : resultText(data.output), 80)} · ${duration(data.durationMs)}`;
    case 'tool.failed':
      return `${data.name} ${data.error?.kind ?? 'failed'}: ${brief(data.error?.message ?? '')} · ${duration(data.durationMs)}`;
    case 'tool.zombie':
      return `${data.name} still running after abort (${data.settled})`;
    case 'agent.observation':
      return `${data.ok ? 'ok' : 'problem'} · ${brief(data.text, 100)}`;
    case 'agent.finished':
      return `${data.reason} after ${data.rounds} round${data.rounds === 1 ? '' : 's'}${data.error ? `: ${brief(data.error)}` : ''}`;
    case 'scene.started':
      return `seed ${data.seed} · ${(data.agents ?? []).join(', ')}`;
    case 'scene.tick':
      return `tick ${data.tick}`;
    case 'scene.stopped':
      return `at tick ${data.tick}: ${data.reason}${data.detail ? ` (${data.detail})` : ''}`;
    case 'scene.event':
      return `${data.name}${data.payload === undefined ? '' : ` ${brief(data.payload, 80)}`}`;
    case 'world.changed':
      return `${data.path} = ${data.value === undefined ? '(removed)' : brief(data.value, 90)}`;
    case 'budget.exhausted':
      return brief(data.message);
    case 'bus.error':
      return `a subscriber of ${data.eventType} threw: ${brief(data.message)}`;
    case 'log.error':
      return brief(data.message);
    case 'log.opened':
      return data.kind === 'resume'
        ? `resumed${tick === undefined ? '' : ` at tick ${tick}`} · replayed ${typeof data.checkpoint === 'number' ? `from checkpoint ${data.checkpoint} (tick ${data.fromTick ?? 0})` : 'from the start'}`
        : `run ${data.run ?? ''}${data.recipe?.scene ? ` of ${data.recipe.scene}` : ''}`;
    default:
      return brief(data, 120);
  }
}
