// @ts-check
/**
 * The inspector page: loads the scene's snapshot, follows `/events` through `connectPanel`, and
 * keeps the view in step. Incoming events are queued and folded in on animation frames, a few
 * milliseconds' worth at a time, so thousands of events a second never freeze the page; the
 * renderers then touch only what changed. In log mode every event is kept, and the scrubber
 * re-derives the view from the first N of them.
 */
import { errorMessage } from './error-message.js';
import { connectPanel } from './panel.js';
import { syncAgentOptions } from './agent-select.js';
import { fetchState, pageToken, RefusedError } from './control.js';
import { applyEarlier, applyEvent, createModel, noteGap, takeChanges } from './model.js';
import { createAgentList } from './render-agents.js';
import { createApprovalsView } from './render-approvals.js';
import { createHeader } from './render-header.js';
import { createTimelineView } from './render-timeline.js';
import { createTranscriptView } from './render-transcript.js';
import { createWorldView } from './render-world.js';
import { createScrubber } from './scrubber.js';

/** @typedef {import('./model.js').Envelope} Envelope */
/** @typedef {import('./model.js').Model} Model */
/** @typedef {import('./model.js').Snapshot} Snapshot */

/** Time spent folding events per frame, in ms; the rest of the frame is for drawing and input. */
const FRAME_BUDGET_MS = 10;
/** After folding more events than this in one go, redraw everything instead of patching. */
const REDRAW_OVER = 3000;

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

async function main() {
  const token = pageToken();
  const header = createHeader({ token, onCommandDone: () => void resync({ world: false }) });
  header.connection({ state: 'connecting' });
  const snapshot = await loadSnapshot(token, header);
  const isLog = snapshot.mode === 'log';
  document.body.classList.add(isLog ? 'page-log' : 'page-live');

  let model = createModel(snapshot, { fromStart: isLog });
  const transcriptAgent = /** @type {HTMLSelectElement} */ ($('transcript-agent'));
  const agents = createAgentList($('agents'), { onSelect: (name) => selectAgent(transcriptAgent.value === name ? '' : name) });
  const transcript = createTranscriptView($('transcript'));
  const world = createWorldView($('world'));
  const approvals = createApprovalsView($('approvals-panel'), $('approvals'), { token });
  const timeline = createTimelineView({
    list: $('timeline'),
    agentSelect: /** @type {HTMLSelectElement} */ ($('timeline-agent')),
    chips: $('timeline-types'),
    detail: $('event-detail'),
    shownCount: $('timeline-count'),
  });

  /** @param {string} name */
  const selectAgent = (name) => {
    transcriptAgent.value = name;
    agents.select(model, name);
    transcript.filter(model, name);
  };
  transcriptAgent.addEventListener('change', () => selectAgent(transcriptAgent.value));

  const redraw = () => {
    takeChanges(model);
    header.render(model);
    agents.reset(model);
    agents.select(model, transcriptAgent.value);
    syncAgentOptions(transcriptAgent, model.agents.keys());
    transcript.reset(model);
    world.reset(model);
    approvals.reset(model);
    timeline.reset(model);
  };

  const patch = () => {
    const changes = takeChanges(model);
    if (changes.header) header.render(model);
    agents.render(model, changes.agents);
    if (changes.agents.size > 0) syncAgentOptions(transcriptAgent, model.agents.keys());
    transcript.render(model, changes.entries);
    world.render(model, changes.world);
    if (changes.approvals) approvals.render(model);
    timeline.render(model, changes.timeline);
  };

  // ---- the event source: live events queue up; a log's events are all kept for the scrubber.
  /** @type {Envelope[]} */
  const queue = [];
  /** @type {Envelope[]} */
  const log = [];
  let applied = 0;
  let target = 0;
  let following = true;
  let scheduled = false;

  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(frame);
  };

  const scrubber = isLog
    ? createScrubber(
        {
          root: $('scrubber'),
          range: /** @type {HTMLInputElement} */ ($('scrub-range')),
          label: $('scrub-label'),
          toStart: /** @type {HTMLButtonElement} */ ($('scrub-start')),
          toEnd: /** @type {HTMLButtonElement} */ ($('scrub-end')),
        },
        {
          onSeek: (position, atEnd) => {
            target = position;
            following = atEnd;
            schedule();
          },
        },
      )
    : undefined;

  /** Folds events until the frame's budget is spent; returns how many. */
  const fold = () => {
    const started = performance.now();
    let count = 0;
    if (isLog) {
      if (following) target = log.length;
      if (target < applied) {
        // Going back: the view is re-derived from the start (events only ever add up).
        model = createModel(snapshot, { fromStart: true });
        applied = 0;
        for (; applied < target; applied++) applyEvent(model, /** @type {Envelope} */ (log[applied]));
        return Infinity;
      }
      while (applied < target && performance.now() - started < FRAME_BUDGET_MS) {
        const end = Math.min(target, applied + 256);
        for (; applied < end; applied++, count++) applyEvent(model, /** @type {Envelope} */ (log[applied]));
      }
      return count;
    }
    let index = 0;
    while (index < queue.length && performance.now() - started < FRAME_BUDGET_MS) {
      const end = Math.min(queue.length, index + 256);
      for (; index < end; index++) applyEvent(model, /** @type {Envelope} */ (queue[index]));
    }
    queue.splice(0, index);
    return index;
  };

  /** Whether there is more to fold than one frame took. */
  const more = () => (isLog ? applied !== (following ? log.length : target) : queue.length > 0);

  function frame() {
    scheduled = false;
    const count = fold();
    if (count > REDRAW_OVER) redraw();
    else patch();
    world.flush();
    if (scrubber !== undefined) {
      const last = log[applied - 1];
      scrubber.update(applied, log.length, { tick: model.tick, at: last?.at, firstAt: log[0]?.at });
    }
    if (more()) schedule();
    else if (world.owes()) setTimeout(schedule, 250);
  }

  /**
   * Reads `/state` again after a command (pause state, control) or a gap (then also the live
   * world, which missed changes).
   *
   * @param {{ world: boolean }} what
   */
  async function resync(what) {
    try {
      const fresh = await fetchState(token);
      model.paused = fresh.paused === true;
      model.canControl = fresh.canControl === true;
      if (what.world && !isLog && fresh.world !== undefined) {
        model.world = fresh.world;
        model.changes.world.push('');
      }
      model.changes.header = true;
      schedule();
    } catch {
      // The connection status already says when the server is away.
    }
  }

  redraw();
  /** @type {import('./panel.js').PanelOptions<any>} */
  const feed = {
    token,
    onEvent: (event) => {
      (isLog ? log : queue).push(/** @type {Envelope} */ (event));
      schedule();
    },
    onGap: (gap) => {
      noteGap(model, gap.missed, gap.kept);
      // A page that opened late: its counts start from the server's summary of what it missed.
      if (Array.isArray(gap.earlier)) applyEarlier(model, gap.missed, gap.earlier);
      void resync({ world: true });
      schedule();
    },
    onStatus: (status) => header.connection(status),
  };
  // `?policy=coalesce` (or sample, drop-oldest) asks the server to thin a busy stream for this page.
  const policy = new URL(location.href).searchParams.get('policy');
  /** @type {import('./panel.js').Panel} */
  let panel;
  try {
    panel = connectPanel(location.href, policy === null ? feed : { ...feed, policy: /** @type {any} */ (policy) });
  } catch (error) {
    header.connection({ state: 'failed', status: 0, error: errorMessage(error) });
    return;
  }
  addEventListener('pagehide', () => panel.close());
}

/**
 * `/state`, retried until the server answers (it may still be starting, or restarting); a
 * refusal (a wrong or missing token) is final.
 *
 * @param {string | undefined} token
 * @param {{ connection: (status: import('./panel.js').PanelStatus) => void }} header
 * @returns {Promise<Snapshot>}
 */
async function loadSnapshot(token, header) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetchState(token);
    } catch (error) {
      const message = errorMessage(error);
      if (error instanceof RefusedError) {
        header.connection({ state: 'failed', status: error.status, error: message });
        throw error;
      }
      const retryInMs = Math.min(5000, 500 * attempt);
      header.connection({ state: 'reconnecting', attempt, retryInMs, error: `cannot load the scene: ${message}` });
      await new Promise((resolve) => setTimeout(resolve, retryInMs));
    }
  }
}

main().catch((error) => {
  // A refusal is already on the page (the connection status); anything else is a bug worth a trace.
  if (!(error instanceof RefusedError)) console.error('troupe inspector:', error);
});
