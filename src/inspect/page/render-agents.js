// @ts-check
/**
 * The agents column: one card per agent with its machine state, what woke it, its last words and
 * its counts. Cards are built once and updated in place, so a busy scene costs a few text writes
 * per frame, not a rebuild.
 */
import { hueClass } from './agent-hue.js';
import { el, setVisibleText } from './dom.js';
import { clip, stateLabel } from './format.js';

/** @typedef {import('./model.js').Model} Model */
/** @typedef {import('./model.js').AgentView} AgentView */

/**
 * @typedef {{ root: HTMLElement, state: HTMLElement, said: HTMLElement, meta: HTMLElement, counts: HTMLElement }} Card
 */

/**
 * @param {HTMLElement} container
 * @param {{ onSelect: (agent: string) => void }} options
 */
export function createAgentList(container, options) {
  /** @type {Map<string, Card>} */
  const cards = new Map();
  const count = document.getElementById('agent-count');
  let selected = '';

  /** @param {AgentView} agent */
  const build = (agent) => {
    const state = el('span', { class: 'state-pill' });
    const said = el('div', { class: 'agent-said' });
    const meta = el('div', { class: 'agent-meta' });
    const counts = el('div', { class: 'agent-counts' });
    const select = () => options.onSelect(agent.name);
    const root = el(
      'div',
      {
        class: 'agent-card',
        attrs: { role: 'button', tabindex: '0', 'data-agent': agent.name, title: 'show this agent only (again: everyone)' },
        on: { click: select, keydown: (event) => /** @type {KeyboardEvent} */ (event).key === 'Enter' && select() },
      },
      [el('div', { class: 'agent-head' }, [el('span', { class: `agent-dot ${hueClass(agent.name)}` }), el('span', { class: 'agent-name', text: agent.name }), state]), said, meta, counts],
    );
    /** @type {Card} */
    const card = { root, state, said, meta, counts };
    cards.set(agent.name, card);
    container.append(root);
    return card;
  };

  /**
   * @param {Card} card
   * @param {AgentView} agent
   */
  const update = (card, agent) => {
    card.root.dataset.state = agent.state;
    card.root.classList.toggle('selected', agent.name === selected);
    card.state.textContent = stateLabel(agent.state);
    card.state.className = `state-pill state-${agent.state}`;
    setVisibleText(card.said, agent.lastSaid === undefined ? '' : `“${clip(agent.lastSaid.replace(/\s+/g, ' '), 120)}”`);
    card.said.hidden = agent.lastSaid === undefined;
    const turn = agent.turns === 0 ? 'no turn yet' : `turn ${agent.turns}${agent.round > 0 ? ` · round ${agent.round}` : ''}`;
    card.meta.textContent = agent.trigger === undefined ? turn : `${turn} · ${agent.trigger}`;
    const parts = [`${agent.calls} call${agent.calls === 1 ? '' : 's'}`];
    if (agent.failures > 0) parts.push(`${agent.failures} failed`);
    if (agent.corrections > 0) parts.push(`${agent.corrections} correction${agent.corrections === 1 ? '' : 's'}`);
    if (agent.awaiting > 0) parts.push(`${agent.awaiting} awaiting approval`);
    if (agent.lastReason !== undefined && agent.lastReason !== 'turn_ended') parts.push(agent.lastReason.replace('_', ' '));
    card.counts.textContent = parts.join(' · ');
  };

  /** @param {Model} model */
  const renderAll = (model) => {
    container.replaceChildren();
    cards.clear();
    for (const agent of model.agents.values()) update(build(agent), agent);
    if (count !== null) count.textContent = String(model.agents.size);
  };

  return {
    /**
     * @param {Model} model
     * @param {Set<string>} changed
     */
    render(model, changed) {
      for (const name of changed) {
        const agent = model.agents.get(name);
        if (agent === undefined) continue;
        update(cards.get(name) ?? build(agent), agent);
      }
      if (count !== null) count.textContent = String(model.agents.size);
    },
    reset: renderAll,
    /**
     * @param {Model} model
     * @param {string} agent the selected agent, or '' for all
     */
    select(model, agent) {
      selected = agent;
      for (const [name, card] of cards) card.root.classList.toggle('selected', name === agent);
    },
  };
}
