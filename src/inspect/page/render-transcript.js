// @ts-check
/**
 * The transcript: each agent's turns, speech (streaming in as it is written, struck through when a
 * retry superseded it), tool calls with arguments, status and duration, corrections and
 * observations. Shows everyone, or one agent. Nodes are kept per entry and rewritten only when
 * their entry changed; the view holds at most `SHOWN` entries.
 */
import { hueClass } from './agent-hue.js';
import { el, setVisibleText, stickToBottom } from './dom.js';
import { brief, duration, json } from './format.js';

/** @typedef {import('./transcript-model.js').Entry} Entry */
/** @typedef {import('./transcript-model.js').CallEntry} CallEntry */
/** @typedef {import('./model.js').Model} Model */

/** Entries on the page at once; older ones leave the DOM (the model keeps more). */
export const SHOWN = 1200;

/** Status words as the call card shows them. */
const STATUS_LABEL = /** @type {Record<string, string>} */ ({
  parsed: 'queued',
  awaiting: 'awaiting approval',
  approved: 'approved',
  denied: 'denied',
  started: 'running',
  completed: 'completed',
  failed: 'failed',
  rejected: 'rejected',
});

/**
 * @param {HTMLElement} container the scrolling list
 */
export function createTranscriptView(container) {
  /** @type {Map<Entry, { node: HTMLElement, rev: number }>} */
  const shown = new Map();
  const scroll = stickToBottom(container);
  let filter = '';
  let lastSeq = 0;
  const empty = el('div', { class: 'empty', text: 'Nothing said or done yet.' });

  /** @param {Entry} entry */
  const visible = (entry) => !entry.hidden && !entry.dropped && (filter === '' || entry.agent === filter);

  /** @param {Entry} entry */
  const add = (entry) => {
    const node = renderEntry(entry);
    shown.set(entry, { node, rev: entry.rev });
    lastSeq = entry.seq;
    return node;
  };

  const trim = () => {
    if (shown.size <= SHOWN) return;
    for (const [entry, { node }] of shown) {
      node.remove();
      shown.delete(entry);
      if (shown.size <= SHOWN) break;
    }
  };

  /** @param {Model} model */
  const reset = (model) => {
    shown.clear();
    const fragment = document.createDocumentFragment();
    const entries = model.transcript.entries;
    /** @type {Entry[]} */
    const picked = [];
    for (let index = entries.length - 1; index >= 0 && picked.length < SHOWN; index--) {
      const entry = /** @type {Entry} */ (entries[index]);
      if (visible(entry)) picked.push(entry);
    }
    for (let index = picked.length - 1; index >= 0; index--) fragment.append(add(/** @type {Entry} */ (picked[index])));
    lastSeq = Math.max(lastSeq, entries.at(-1)?.seq ?? 0);
    container.replaceChildren(fragment);
    if (shown.size === 0) container.append(empty);
    scroll.pin();
  };

  return {
    /**
     * @param {Model} _model
     * @param {Set<Entry>} changed new and updated entries, oldest first
     */
    render(_model, changed) {
      if (changed.size === 0) return;
      const fragment = document.createDocumentFragment();
      for (const entry of changed) {
        const known = shown.get(entry);
        if (known !== undefined) {
          if (!visible(entry)) {
            known.node.remove();
            shown.delete(entry);
          } else if (known.rev !== entry.rev) {
            const node = renderEntry(entry);
            known.node.replaceWith(node);
            shown.set(entry, { node, rev: entry.rev });
          }
        } else if (entry.seq > lastSeq && visible(entry)) {
          fragment.append(add(entry));
        }
      }
      if (fragment.childNodes.length > 0) {
        empty.remove();
        container.append(fragment);
      }
      trim();
      scroll.after();
    },
    reset,
    /**
     * Shows one agent ('' for everyone).
     *
     * @param {Model} model
     * @param {string} agent
     */
    filter(model, agent) {
      filter = agent;
      reset(model);
    },
  };
}

/**
 * @param {Entry} entry
 * @returns {HTMLElement}
 */
function renderEntry(entry) {
  const who = entry.agent === '' ? null : el('span', { class: `who ${hueClass(entry.agent)}`, text: entry.agent });
  const tick = el('span', { class: 'tick', text: `t${entry.tick}` });
  switch (entry.kind) {
    case 'turn':
      return el('div', { class: 'entry turn', attrs: { 'data-agent': entry.agent } }, [
        who,
        el('span', { class: 'turn-text', text: `turn · ${entry.reason}${entry.detail ? ` (${entry.detail})` : ''}` }),
        tick,
      ]);
    case 'speech': {
      const text = el('div', { class: 'speech-text' });
      setVisibleText(text, entry.text);
      const to = entry.to === undefined ? null : el('span', { class: 'to', text: `→ ${entry.to}` });
      const phase = entry.phase === 'superseded' ? el('span', { class: 'phase', text: 'superseded' }) : null;
      return el('div', { class: `entry speech phase-${entry.phase}`, attrs: { 'data-agent': entry.agent } }, [
        el('div', { class: 'entry-head' }, [who, to, phase, tick]),
        text,
      ]);
    }
    case 'thought': {
      const text = el('div', { class: 'thought-text' });
      setVisibleText(text, entry.text);
      const label = entry.phase === 'superseded' ? 'thinking · superseded' : 'thinking';
      return el('div', { class: `entry thought phase-${entry.phase}`, attrs: { 'data-agent': entry.agent } }, [
        el('div', { class: 'entry-head' }, [who, el('span', { class: 'label', text: label }), tick]),
        text,
      ]);
    }
    case 'call':
      return renderCall(entry, who, tick);
    case 'malformed': {
      const message = el('div', { class: 'message' });
      setVisibleText(message, entry.message);
      return el('div', { class: 'entry correction', attrs: { 'data-agent': entry.agent } }, [
        el('div', { class: 'entry-head' }, [who, el('span', { class: 'label', text: `malformed <ACTION> · ${entry.code}` }), tick]),
        message,
      ]);
    }
    case 'observation': {
      const text = el('pre', { class: 'observation-text' });
      setVisibleText(text, entry.text);
      const node = el('div', { class: `entry observation ${entry.ok ? 'ok' : 'problem'}`, attrs: { 'data-agent': entry.agent, title: 'click to expand' } }, [
        el('div', { class: 'entry-head' }, [who, el('span', { class: 'label', text: entry.ok ? 'observation' : 'observation · problem' }), tick]),
        text,
      ]);
      node.addEventListener('click', () => node.classList.toggle('expanded'));
      return node;
    }
    case 'note': {
      const text = el('span', { class: 'note-text' });
      setVisibleText(text, entry.text);
      return el('div', { class: `entry note tone-${entry.tone}`, attrs: { 'data-agent': entry.agent } }, [who, el('span', { class: 'label', text: entry.label }), text, tick]);
    }
    default:
      return el('div', { class: 'entry' });
  }
}

/**
 * A tool call's card: name, status, duration, arguments, and what came of it.
 *
 * @param {CallEntry} call
 * @param {HTMLElement | null} who
 * @param {HTMLElement} tick
 */
function renderCall(call, who, tick) {
  // A `say` call is the speech shown beside it: one line is enough.
  const compact = call.name === 'say' && call.status === 'completed';
  const status = el('span', { class: `status status-${call.status}`, text: STATUS_LABEL[call.status] ?? call.status });
  const time = call.durationMs === undefined ? null : el('span', { class: 'duration', text: duration(call.durationMs) });
  const attempt = call.attempt > 1 ? el('span', { class: 'attempt', text: `attempt ${call.attempt}` }) : null;
  const args = el('dl', { class: 'args' });
  if (typeof call.args === 'object' && call.args !== null) {
    for (const [key, value] of Object.entries(call.args)) {
      const dd = el('dd');
      setVisibleText(dd, typeof value === 'string' ? value : json(value));
      args.append(el('dt', { text: key }), dd);
    }
  }
  /** @type {HTMLElement[]} */
  const outcome = [];
  if (call.status === 'completed' && !compact) outcome.push(textLine('result', `→ ${brief(call.output, 400)}`));
  if (call.error !== undefined) {
    outcome.push(textLine('error', `${call.error.kind}: ${call.error.message}${call.error.hint ? ` (${call.error.hint})` : ''}`));
  }
  if (call.rejection !== undefined) {
    const { code, message, suggestion } = call.rejection;
    const hint = suggestion !== undefined && !message.includes(suggestion) ? ` Did you mean ${suggestion}?` : '';
    outcome.push(textLine('error', `${code}: ${message}${hint}`));
  }
  if (call.approval !== undefined) {
    const { approved, reason } = call.approval;
    const because = reason !== undefined && reason !== '' && reason !== 'approved' && reason !== 'denied' ? `: ${reason}` : '';
    outcome.push(textLine(approved ? 'outcome-approved' : 'outcome-denied', `${approved ? '✓ approved' : '✗ denied'}${because}`));
  }
  if (call.repair !== undefined) outcome.push(textLine('outcome-approved', `⚒ repaired (by ${call.repair.by}) as ${call.repair.name}`));
  if (call.resultApproval !== undefined) {
    const { state, reason } = call.resultApproval;
    const because = reason !== undefined && reason !== '' && reason !== 'approved' ? `: ${reason}` : '';
    if (state === 'waiting') outcome.push(textLine('outcome-waiting', '… result awaiting approval'));
    else outcome.push(textLine(state === 'approved' ? 'outcome-approved' : 'outcome-denied', state === 'approved' ? '✓ result approved' : `✗ result withheld from the model${because}`));
  }
  if (call.zombie !== undefined) outcome.push(textLine('error', `kept running after abort (${call.zombie}); its result is discarded`));
  return el('div', { class: `entry call status-${call.status}${compact ? ' compact' : ''}`, attrs: { 'data-agent': call.agent, 'data-call-id': call.callId, 'data-status': call.status } }, [
    el('div', { class: 'entry-head' }, [who, el('span', { class: 'tool-name', text: call.name }), status, attempt, time, tick]),
    args.childElementCount > 0 && !compact ? args : null,
    ...outcome,
  ]);
}

/**
 * @param {string} kind
 * @param {string} text
 */
function textLine(kind, text) {
  const line = el('div', { class: `outcome ${kind}` });
  setVisibleText(line, text);
  return line;
}
