// @ts-check
/**
 * Pending approvals: every `tool.approval.requested` without its `tool.approval.resolved`, with
 * the call's arguments and Approve / Deny buttons that post to `/control`; and every held result
 * (`tool.result.approval.requested`) with its output as text and Approve / Reject buttons. A
 * request leaves the list when the bus says it was resolved, not when the button is pressed: the
 * page shows what the scene did, and a refused command says why. A request too large for the
 * stream (`$truncated`) shows its preview; its approval carries the request's hash all the same.
 */
import { hueClass } from './agent-hue.js';
import { el, setVisibleText } from './dom.js';
import { json } from './format.js';
import { sendControl } from './control.js';

/** @typedef {import('./model.js').Model} Model */
/** @typedef {import('./model.js').Approval} Approval */

/**
 * What the Approve button posts: always the request's hash (`argsHash` / `outputHash`), so the
 * approval binds to what was asked even when the card could only show a preview; a call's card
 * that shows its arguments sends them too.
 *
 * @param {Approval} approval
 * @returns {import('./control.js').Command}
 */
export function approveCommand(approval) {
  const { agent, callId } = approval;
  if (approval.kind === 'result') return approval.outputHash === undefined ? { type: 'approveResult', agent, callId } : { type: 'approveResult', agent, callId, outputHash: approval.outputHash };
  return {
    type: 'approve',
    agent,
    callId,
    ...(approval.argsHash === undefined ? {} : { argsHash: approval.argsHash }),
    ...(approval.truncated === undefined ? { args: /** @type {Record<string, unknown>} */ (approval.args) } : {}),
  };
}

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
    const forResult = approval.kind === 'result';
    const args = el('pre', { class: 'approval-args' });
    const cut = approval.truncated;
    // Too large for the stream: the preview is the start of the request's JSON, not its arguments.
    setVisibleText(args, cut === undefined ? json(approval.args, 2) : `too large to show (${cut.chars.toLocaleString('en-US')} characters); the start of the request:\n${cut.preview}…`);
    /** @type {HTMLElement | undefined} */
    let output;
    if (forResult && cut === undefined) {
      output = el('pre', { class: 'approval-args approval-output' });
      setVisibleText(output, typeof approval.output === 'string' ? approval.output : json(approval.output, 2));
    }
    const refusal = forResult ? 'rejecting' : 'denying';
    const reason = el('input', { class: 'deny-reason', attrs: { type: 'text', placeholder: `reason for ${refusal} (optional)`, 'aria-label': `reason for ${refusal}` } });
    const problem = el('div', { class: 'approval-error', attrs: { role: 'alert' } });
    const approve = el('button', { class: 'button approve', text: 'Approve', attrs: { type: 'button' } });
    const deny = el('button', { class: 'button deny', text: forResult ? 'Reject' : 'Deny', attrs: { type: 'button' } });

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
    const { agent, callId } = approval;
    // An approval carries the request's hash (and a call's the arguments shown): the agent refuses it if they are not the call's.
    approve.addEventListener('click', () => void answer(approveCommand(approval)));
    deny.addEventListener('click', () => {
      const type = forResult ? 'rejectResult' : 'deny';
      const text = reason.value.trim();
      void answer(text === '' ? { type, agent, callId } : { type, agent, callId, reason: text });
    });

    const card = el('div', { class: forResult ? 'approval result-approval' : 'approval', attrs: { 'data-agent': agent, 'data-call-id': callId, 'data-kind': approval.kind } }, [
      el('div', { class: 'approval-head' }, [
        el('span', { class: `who ${hueClass(agent)}`, text: agent }),
        el('span', { class: 'label', text: forResult ? 'wants the model to see the result of' : 'wants to run' }),
        el('span', { class: 'tool-name', text: approval.name }),
        el('span', { class: 'tick', text: `t${approval.tick}` }),
      ]),
      args,
      ...(output === undefined ? [] : [el('div', { class: 'label', text: 'result' }), output]),
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
