// @ts-check
/**
 * The header: scene name, live or log, tick, clock, event count, connection status, the scene's
 * run state (running, paused, stopped; interrupted for a log its writer left open) and the
 * pause / resume / step buttons.
 */
import { sendControl } from './control.js';
import { isInterrupted } from './model.js';

/** @typedef {import('./model.js').Model} Model */

/**
 * @param {{ token: string | undefined, onCommandDone: () => void }} options
 */
export function createHeader(options) {
  const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
  const sceneName = $('scene-name');
  const mode = $('mode');
  const tick = $('tick');
  const clock = $('clock');
  const events = $('event-count');
  const missed = $('missed');
  const runState = $('run-state');
  const connection = $('connection');
  const controls = $('controls');
  const pause = /** @type {HTMLButtonElement} */ ($('pause'));
  const resume = /** @type {HTMLButtonElement} */ ($('resume'));
  const step = /** @type {HTMLButtonElement} */ ($('step'));
  const controlError = $('control-error');
  let busy = false;

  /** @param {import('./control.js').Command} command */
  const send = async (command) => {
    busy = true;
    controlError.textContent = '';
    for (const button of [pause, resume, step]) button.disabled = true;
    const answer = await sendControl(command, options.token);
    busy = false;
    if ('error' in answer) controlError.textContent = answer.error;
    options.onCommandDone();
  };
  pause.addEventListener('click', () => void send({ type: 'pause' }));
  resume.addEventListener('click', () => void send({ type: 'resume' }));
  step.addEventListener('click', () => void send({ type: 'step' }));

  return {
    /** @param {Model} model */
    render(model) {
      if (sceneName.textContent !== model.scene) {
        sceneName.textContent = model.scene || 'scene';
        document.title = `${model.scene || 'scene'} · troupe inspector`;
      }
      mode.textContent = model.mode === 'log' ? 'log' : 'live';
      mode.className = `badge mode-${model.mode}`;
      tick.textContent = String(model.shownTick);
      clock.textContent = model.clockMode;
      events.textContent = model.eventCount.toLocaleString('en');
      missed.hidden = model.gaps === 0;
      missed.textContent = missedText(model);
      missed.title = missedTitle(model);

      const interrupted = isInterrupted(model);
      const state = model.stopped !== undefined ? 'stopped' : interrupted ? 'interrupted' : model.paused ? 'paused' : model.started ? 'running' : 'waiting';
      runState.className = `badge run-${state}`;
      runState.textContent = model.stopped !== undefined && model.stopped.reason !== '' ? `stopped · ${model.stopped.reason}` : state;
      runState.title = interrupted
        ? `the writer stopped without closing the log at tick ${model.tick} (killed or crashed): the run did not end, and troupe resume can continue it`
        : (model.stopped?.detail ?? '');

      // Pause and step drive a stepped clock from the page; a log, or a read-only server, has none.
      const controllable = model.mode === 'live' && model.canControl && model.clockMode === 'stepped' && model.stopped === undefined;
      controls.hidden = !controllable;
      if (controllable && !busy) {
        pause.hidden = model.paused;
        resume.hidden = !model.paused;
        pause.disabled = resume.disabled = false;
        step.disabled = !model.paused;
      }
    },
    /** @param {import('./panel.js').PanelStatus} status */
    connection(status) {
      const { text, title, tone } = describeStatus(status);
      connection.textContent = text;
      connection.title = title;
      connection.dataset.state = status.state;
      connection.className = `connection ${tone}`;
    },
  };
}

/**
 * The gap badge: events this page could not get.
 *
 * @param {Model} model
 */
function missedText(model) {
  if (model.missedEarlier > 0 && model.missed === model.missedEarlier) return `${model.missedEarlier.toLocaleString('en')} earlier events missed`;
  return model.missed > 0 ? `${model.missed.toLocaleString('en')} events missed` : 'events missed';
}

/**
 * @param {Model} model
 */
function missedTitle(model) {
  const kept = model.kept > 0 ? `the server keeps the last ${model.kept.toLocaleString('en')} events` : 'the server no longer held some events';
  if (model.missedEarlier > 0) {
    return `${kept}; this page opened after the first ${model.missedEarlier.toLocaleString('en')} of the run. The timeline and transcript start after them; the agents' turns, counts and last words include them (the server's summary).`;
  }
  return `${kept}; the view may be incomplete (the world was read again).`;
}

/**
 * The connection status in words, with the detail (the error) as a tooltip.
 *
 * @param {import('./panel.js').PanelStatus} status
 * @returns {{ text: string, title: string, tone: string }}
 */
function describeStatus(status) {
  switch (status.state) {
    case 'open':
      return { text: 'connected', title: 'receiving events', tone: 'tone-ok' };
    case 'connecting':
      return { text: 'connecting…', title: '', tone: 'tone-pending' };
    case 'reconnecting':
      return { text: `reconnecting in ${Math.ceil(status.retryInMs / 1000)} s`, title: status.error, tone: 'tone-pending' };
    case 'failed':
      return { text: `refused: ${status.error}`, title: status.error, tone: 'tone-bad' };
    case 'closed':
      return { text: 'closed', title: '', tone: 'tone-bad' };
    default:
      return { text: String(/** @type {any} */ (status).state), title: '', tone: 'tone-pending' };
  }
}
