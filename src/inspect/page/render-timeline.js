// @ts-check
/**
 * The timeline: every event as one row (tick, agent, type, what happened), filtered by agent and
 * by type family, newest at the bottom. The page keeps the last `SHOWN` matching rows; clicking a
 * row shows the whole envelope. Streamed pieces (`llm.delta` and kin) are hidden until asked for:
 * a streaming model writes hundreds of them per answer. Where a log was resumed, a marker row
 * ("resumed at tick N") shows whatever the filters.
 */
import { hueClass } from './agent-hue.js';
import { syncAgentOptions } from './agent-select.js';
import { el, setVisibleText, stickToBottom } from './dom.js';
import { json, summarize } from './format.js';
import { isResume } from './model.js';

/** @typedef {import('./model.js').Model} Model */
/** @typedef {import('./model.js').TimelineRow} TimelineRow */

/** Rows on the page at once. */
export const SHOWN = 2000;

/** Streamed pieces of a model's answer: many per answer, so they have a chip of their own. */
const DELTAS = new Set(['llm.delta', 'llm.reasoning', 'llm.tool_call.delta']);

/** The filter chip an event type belongs to: its subject (`tool`), or `delta` for streamed pieces. */
function familyOf(/** @type {string} */ type) {
  if (DELTAS.has(type)) return 'delta';
  const dot = type.indexOf('.');
  return dot === -1 ? type : type.slice(0, dot);
}

/** Chips shown from the start, in this order; others appear when their first event does. */
const KNOWN_FAMILIES = ['agent', 'llm', 'delta', 'action', 'tool', 'world', 'scene'];

/**
 * @param {{ list: HTMLElement, agentSelect: HTMLSelectElement, chips: HTMLElement, detail: HTMLElement, shownCount: HTMLElement }} parts
 */
export function createTimelineView(parts) {
  const { list, agentSelect, chips, detail, shownCount } = parts;
  const scroll = stickToBottom(list);
  const hidden = new Set(['delta']);
  /** @type {Map<string, HTMLButtonElement>} */
  const chipButtons = new Map();
  /** @type {Model | undefined} */
  let latest;
  /** @type {HTMLElement | undefined} */
  let selectedRow;

  /** @param {TimelineRow} row */
  const matches = (row) => {
    if (isResume(row.event)) return true;
    if (hidden.has(familyOf(row.event.type))) return false;
    return agentSelect.value === '' || row.event.agent === agentSelect.value;
  };

  /** @param {string} family */
  const chip = (family) => {
    let button = chipButtons.get(family);
    if (button !== undefined) return button;
    button = el('button', { class: `chip fam-${family}`, text: family === 'delta' ? 'deltas' : family, attrs: { type: 'button', 'data-family': family } });
    const pressed = () => String(!hidden.has(family));
    button.setAttribute('aria-pressed', pressed());
    button.addEventListener('click', () => {
      if (hidden.has(family)) hidden.delete(family);
      else hidden.add(family);
      /** @type {HTMLButtonElement} */ (button).setAttribute('aria-pressed', pressed());
      if (latest !== undefined) reset(latest);
    });
    chipButtons.set(family, button);
    chips.append(button);
    return button;
  };
  for (const family of KNOWN_FAMILIES) chip(family);
  agentSelect.addEventListener('change', () => latest !== undefined && reset(latest));

  /** @param {TimelineRow} row */
  const rowNode = (row) => {
    const { event } = row;
    const family = familyOf(event.type);
    const summary = el('span', { class: 't-sum' });
    setVisibleText(summary, summarize(event, row.tick));
    const node = el('div', { class: `t-row fam-${family}${isResume(event) ? ' t-resume' : ''}`, attrs: { 'data-id': event.id, 'data-type': event.type, 'data-agent': event.agent ?? '' } }, [
      el('span', { class: 't-tick', text: `t${row.tick}` }),
      el('span', { class: `t-who ${event.agent === undefined ? 'scene' : hueClass(event.agent)}`, text: event.agent ?? event.scene ?? '' }),
      el('span', { class: 't-type', text: event.type, title: event.type }),
      summary,
    ]);
    node.addEventListener('click', () => showDetail(node, row));
    return node;
  };

  /**
   * @param {HTMLElement} node
   * @param {TimelineRow} row
   */
  const showDetail = (node, row) => {
    selectedRow?.classList.remove('selected');
    if (selectedRow === node) {
      selectedRow = undefined;
      detail.hidden = true;
      return;
    }
    selectedRow = node;
    node.classList.add('selected');
    detail.hidden = false;
    setVisibleText(detail, json(row.event, 2));
  };

  const updateCount = () => {
    shownCount.textContent = list.childElementCount.toLocaleString('en');
  };

  /** @param {Model} model */
  const reset = (model) => {
    latest = model;
    syncAgentOptions(agentSelect, model.agents.keys());
    /** @type {TimelineRow[]} */
    const picked = [];
    for (let index = model.timeline.length - 1; index >= 0 && picked.length < SHOWN; index--) {
      const row = /** @type {TimelineRow} */ (model.timeline[index]);
      chip(familyOf(row.event.type));
      if (matches(row)) picked.push(row);
    }
    const fragment = document.createDocumentFragment();
    for (let index = picked.length - 1; index >= 0; index--) fragment.append(rowNode(/** @type {TimelineRow} */ (picked[index])));
    list.replaceChildren(fragment);
    selectedRow = undefined;
    detail.hidden = true;
    updateCount();
    scroll.pin();
  };

  return {
    /**
     * @param {Model} model
     * @param {TimelineRow[]} added rows new since the last render, oldest first
     */
    render(model, added) {
      latest = model;
      syncAgentOptions(agentSelect, model.agents.keys());
      if (added.length === 0) return;
      /** @type {TimelineRow[]} */
      const picked = [];
      for (let index = added.length - 1; index >= 0 && picked.length < SHOWN; index--) {
        const row = /** @type {TimelineRow} */ (added[index]);
        chip(familyOf(row.event.type));
        if (matches(row)) picked.push(row);
      }
      if (picked.length === 0) return;
      const fragment = document.createDocumentFragment();
      for (let index = picked.length - 1; index >= 0; index--) fragment.append(rowNode(/** @type {TimelineRow} */ (picked[index])));
      list.append(fragment);
      // Drop the oldest rows beyond the cap (the selected one may go with them).
      let extra = list.childElementCount - SHOWN;
      while (extra-- > 0 && list.firstElementChild !== null) {
        if (list.firstElementChild === selectedRow) {
          selectedRow = undefined;
          detail.hidden = true;
        }
        list.firstElementChild.remove();
      }
      updateCount();
      scroll.after();
    },
    reset,
  };
}
