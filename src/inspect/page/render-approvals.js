// @ts-check
/**
 * Pending approvals: every `tool.approval.requested` without its `tool.approval.resolved`, with
 * the call's arguments and Approve / Deny buttons that post to `/control`. A request leaves the
 * list when the bus says it was resolved, not when the button is pressed: the page shows what
 * the scene did, and a refused command says why.
 */
import { hueClass } from './agent-hue.js';
import { el, setVisibleText } from './dom.js';
import { json } from './format.js';
import { sendControl } from './control.js';

/** @typedef {import('./model.js').Model} Model */
/** @typedef {import('./model.js').Approval} Approval */

/**
 * @param {HTMLElement} panel the section, hidden while nothing waits
 * @param {HTMLElement} container
 * @param {{ token: string | undefined }} options
 */
export function createApprovalsView(panel, container, options) {
  /** @type {Map<string, HTMLElement>} */
  const cards = new Map();
  const count = document.getElementById('approval-count');

  /**
   * @param {Approval} approval
   * @param {boolean} canAnswer
   */
  const build = (approval, canAnswer) => {
    const args = el('pre', { class: 'approval-args' });
    setVisibleText(args, json(approval.args, 2));
    const reason = el('input', { class: 'deny-reason', attrs: { type: 'text', placeholder: 'reason for denying (optional)', 'aria-label': 'reason for denying' } });
    const problem = el('div', { class: 'approval-error', attrs: { role: 'alert' } });
    const approve = el('button', { class: 'button approve', text: 'Approve', attrs: { type: 'button' } });
    const deny = el('button', { class: 'button deny', text: 'Deny', attrs: { type: 'button' } });

    /** @param {import('./control.js').Command} command */
    const answer = async (command) => {
      approve.disabled = deny.disabled = reason.disabled = true;
      problem.textContent = '';
      card.classList.add('sending');
      const result = await sendControl(command, options.token);
      card.classList.remove('sending');
      if ('error' in result) {
        problem.textContent = result.error;
        approve.disabled = deny.disabled = reason.disabled = false;
      }
    };
    approve.addEventListener('click', () => void answer({ type: 'approve', agent: approval.agent, callId: approval.callId }));
    deny.addEventListener('click', () => {
      const text = reason.value.trim();
      void answer(text === '' ? { type: 'deny', agent: approval.agent, callId: approval.callId } : { type: 'deny', agent: approval.agent, callId: approval.callId, reason: text });
    });

    const card = el('div', { class: 'approval', attrs: { 'data-agent': approval.agent, 'data-call-id': approval.callId } }, [
      el('div', { class: 'approval-head' }, [
        el('span', { class: `who ${hueClass(approval.agent)}`, text: approval.agent }),
        el('span', { class: 'label', text: 'wants to run' }),
        el('span', { class: 'tool-name', text: approval.name }),
        el('span', { class: 'tick', text: `t${approval.tick}` }),
      ]),
      args,
      canAnswer ? el('div', { class: 'approval-actions' }, [reason, deny, approve]) : el('div', { class: 'label', text: 'read-only: this inspector cannot answer' }),
      problem,
    ]);
    return card;
  };

  /** @param {Model} model */
  const render = (model) => {
    const canAnswer = model.mode === 'live' && model.canControl;
    for (const [key, card] of cards) {
      if (model.approvals.has(key)) continue;
      card.remove();
      cards.delete(key);
    }
    for (const [key, approval] of model.approvals) {
      if (cards.has(key)) continue;
      const card = build(approval, canAnswer);
      cards.set(key, card);
      container.append(card);
    }
    panel.hidden = cards.size === 0;
    if (count !== null) count.textContent = String(cards.size);
  };

  return {
    render,
    /** @param {Model} model */
    reset(model) {
      container.replaceChildren();
      cards.clear();
      render(model);
    },
  };
}
