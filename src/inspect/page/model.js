// @ts-check
/**
 * The page's view of a scene, as data: the header (scene, tick, pause, stop), the agents and their
 * machine states, the world, pending approvals, the transcript and the timeline. `applyEvent`
 * folds one bus envelope in and records what changed, so the renderers touch only that; log mode
 * re-derives the whole view by folding the first N events into a fresh model.
 */
import { applyToTranscript, createTranscript } from './transcript-model.js';
import { withChange } from './world-path.js';

/**
 * A bus envelope as `/events` sends it.
 *
 * @typedef {{ id: string, type: string, at: number, scene?: string, agent?: string, cause?: string, v?: number, data: any }} Envelope
 */

/**
 * What `GET /state` answers. `started` and `stopped` are the scene's own word, for when the
 * history no longer holds `scene.started`. A replay from the start (the scrubber) begins with an
 * empty world: `scene.started` brings the world the scene started from.
 *
 * @typedef {{
 *   mode: 'live' | 'log',
 *   scene: string | null,
 *   clock: unknown,
 *   paused: boolean,
 *   started?: boolean,
 *   stopped?: boolean,
 *   canControl: boolean,
 *   agents: { name: string, state: string, turns?: number, lastReason?: string }[],
 *   world: unknown,
 *   tick: number,
 *   ended?: 'closed' | 'interrupted',
 *   events?: number,
 *   resumes?: { id: string, run: string, tick: number, fromTick: number, checkpoint?: number }[],
 * }} Snapshot
 */

/**
 * @typedef {{
 *   name: string, state: string, tools: string[], protocol?: string,
 *   turns: number, round: number, trigger?: string, calls: number, failures: number, corrections: number,
 *   lastReason?: string, lastSaid?: string, awaiting: number,
 * }} AgentView
 * @typedef {{ key: string, kind: 'call' | 'result', agent: string, callId: string, name: string, args: unknown, output?: unknown, argsHash?: string, outputHash?: string, truncated?: { chars: number, preview: string }, tick: number }} Approval
 * @typedef {{ seq: number, tick: number, event: Envelope }} TimelineRow
 * @typedef {{
 *   header: boolean,
 *   agents: Set<string>,
 *   world: string[],
 *   approvals: boolean,
 *   timeline: TimelineRow[],
 * }} Changes
 * @typedef {{
 *   mode: 'live' | 'log', scene: string, clockMode: string, canControl: boolean, paused: boolean,
 *   tick: number, shownTick: number, started: boolean, stopped?: { reason: string, detail?: string, tick: number },
 *   ended?: 'closed' | 'interrupted', logEvents: number, resumes: number,
 *   eventCount: number, gaps: number, missed: number, kept: number, missedEarlier: number,
 *   agents: Map<string, AgentView>, world: unknown,
 *   approvals: Map<string, Approval>,
 *   transcript: import('./transcript-model.js').TranscriptModel,
 *   timeline: TimelineRow[],
 *   changes: Changes,
 * }} Model
 */

/** Timeline rows kept in memory, so a change of filter can still fill the view. */
export const TIMELINE_KEEP = 6000;

/**
 * The clock's mode as `/state` gives it (null for a log, which has no clock to speak of).
 *
 * @param {unknown} clock
 */
function clockModeOf(clock) {
  return typeof clock === 'string' ? clock : '–';
}

/**
 * A model from the `/state` snapshot. `fromStart` builds the view before the first event (log
 * mode's scrubber): agents idle, the world as it was at the start.
 *
 * @param {Snapshot} snapshot
 * @param {{ fromStart?: boolean }} [options]
 * @returns {Model}
 */
export function createModel(snapshot, options = {}) {
  const fromStart = options.fromStart === true;
  /** @type {Model} */
  const model = {
    mode: snapshot.mode === 'log' ? 'log' : 'live',
    scene: typeof snapshot.scene === 'string' ? snapshot.scene : '',
    clockMode: clockModeOf(snapshot.clock),
    canControl: snapshot.canControl === true,
    paused: snapshot.paused === true,
    // Replayed events carry the ticks they happened at; the snapshot's tick is a floor for the
    // header only (a history that no longer holds the scene's early ticks still shows the right one).
    tick: 0,
    shownTick: fromStart ? 0 : Number(snapshot.tick ?? 0),
    // A long run's history may no longer hold `scene.started`: the server's word seeds it. A stop
    // shows at once (no Pause on a finished scene); its reason comes with the replayed `scene.stopped`.
    started: !fromStart && snapshot.started === true,
    ...(!fromStart && snapshot.stopped === true ? { stopped: { reason: '', tick: Number(snapshot.tick ?? 0) } } : {}),
    // A log's end as the server read it: a writer that died leaves it `interrupted`, which the
    // header says once the view has reached the log's last event.
    ...(snapshot.ended === 'closed' || snapshot.ended === 'interrupted' ? { ended: snapshot.ended } : {}),
    logEvents: Number(snapshot.events ?? 0) || 0,
    resumes: 0,
    eventCount: 0,
    gaps: 0,
    missed: 0,
    kept: 0,
    missedEarlier: 0,
    agents: new Map(),
    world: fromStart ? {} : (snapshot.world ?? {}),
    approvals: new Map(),
    transcript: createTranscript(),
    timeline: [],
    changes: emptyChanges(),
  };
  for (const agent of snapshot.agents ?? []) agentView(model, agent.name).state = fromStart ? 'idle' : agent.state;
  model.changes.header = true;
  return model;
}

/** @returns {Changes} */
function emptyChanges() {
  return { header: false, agents: new Set(), world: [], approvals: false, timeline: [] };
}

/**
 * What changed since the last call, for the renderers; starts a new record.
 *
 * @param {Model} model
 */
export function takeChanges(model) {
  const changes = model.changes;
  const entries = model.transcript.changed;
  model.changes = emptyChanges();
  model.transcript.changed = new Set();
  return { ...changes, entries };
}

/**
 * The view of one agent, created when an event first names it.
 *
 * @param {Model} model
 * @param {string} name
 * @returns {AgentView}
 */
function agentView(model, name) {
  let view = model.agents.get(name);
  if (view === undefined) {
    view = { name, state: 'idle', tools: [], turns: 0, round: 0, calls: 0, failures: 0, corrections: 0, awaiting: 0 };
    model.agents.set(name, view);
  }
  model.changes.agents.add(name);
  return view;
}

/**
 * An approval request's digests, and whether it came `$truncated` (too large for the stream):
 * then its card shows a preview and can be approved only with the digest.
 *
 * @param {any} data
 * @returns {{ argsHash?: string, outputHash?: string, truncated?: { chars: number, preview: string } }}
 */
function hashesOf(data) {
  return {
    ...(typeof data.argsHash === 'string' ? { argsHash: data.argsHash } : {}),
    ...(typeof data.outputHash === 'string' ? { outputHash: data.outputHash } : {}),
    ...(data.$truncated === true ? { truncated: { chars: Number(data.chars), preview: String(data.preview ?? '') } } : {}),
  };
}

/**
 * Folds one envelope into the model.
 *
 * @param {Model} model
 * @param {Envelope} event
 */
export function applyEvent(model, event) {
  const data = /** @type {any} */ (event.data ?? {});
  model.eventCount++;
  model.changes.header = true;
  if (typeof data.tick === 'number' && data.tick > model.tick) model.tick = data.tick;
  if (model.tick > model.shownTick) model.shownTick = model.tick;

  const row = { seq: model.eventCount, tick: model.tick, event };
  model.timeline.push(row);
  model.changes.timeline.push(row);
  if (model.timeline.length > TIMELINE_KEEP * 1.25) model.timeline.splice(0, model.timeline.length - TIMELINE_KEEP);

  const agent = event.agent === undefined || event.agent === '' ? undefined : agentView(model, event.agent);
  applyToAgent(model, agent, event.type, data);
  applyToScene(model, event, data);
  // Speech, calls and notes that belong to no agent (a budget, a scene event) still show under "all".
  applyToTranscript(model.transcript, event, model.tick);
}

/**
 * @param {Model} model
 * @param {AgentView | undefined} agent
 * @param {string} type
 * @param {any} data
 */
function applyToAgent(model, agent, type, data) {
  if (agent === undefined) return;
  switch (type) {
    case 'agent.spawned':
      agent.tools = Array.isArray(data.tools) ? data.tools.map(String) : [];
      agent.protocol = data.protocol;
      return;
    case 'agent.state':
      agent.state = String(data.to);
      return;
    case 'agent.triggered':
      agent.turns++;
      agent.round = 0;
      agent.trigger = `${data.reason}${data.detail ? ` (${data.detail})` : ''}`;
      return;
    case 'llm.request':
      agent.round = Number(data.round ?? agent.round);
      return;
    case 'agent.said':
      agent.lastSaid = String(data.text ?? '');
      return;
    case 'tool.completed':
      agent.calls++;
      return;
    case 'tool.failed':
      agent.calls++;
      agent.failures++;
      return;
    case 'tool.rejected':
      if (data.code !== 'denied') agent.corrections++;
      return;
    case 'action.malformed':
      agent.corrections++;
      return;
    case 'tool.approval.requested': {
      const key = approvalKey(agent.name, data.callId);
      model.approvals.set(key, { key, kind: 'call', agent: agent.name, callId: String(data.callId), name: String(data.name), args: data.args, ...hashesOf(data), tick: model.tick });
      agent.awaiting = countAwaiting(model, agent.name);
      model.changes.approvals = true;
      return;
    }
    case 'tool.approval.resolved':
      model.approvals.delete(approvalKey(agent.name, data.callId));
      agent.awaiting = countAwaiting(model, agent.name);
      model.changes.approvals = true;
      return;
    case 'tool.result.approval.requested': {
      const key = approvalKey(agent.name, data.callId, 'result');
      model.approvals.set(key, {
        key,
        kind: 'result',
        agent: agent.name,
        callId: String(data.callId),
        name: String(data.name),
        args: data.args,
        output: data.output,
        ...hashesOf(data),
        tick: model.tick,
      });
      agent.awaiting = countAwaiting(model, agent.name);
      model.changes.approvals = true;
      return;
    }
    case 'tool.result.approval.resolved':
      model.approvals.delete(approvalKey(agent.name, data.callId, 'result'));
      agent.awaiting = countAwaiting(model, agent.name);
      model.changes.approvals = true;
      return;
    case 'agent.finished':
      agent.lastReason = String(data.reason);
      // A finished run can no longer take an answer: its requests are void.
      for (const [key, approval] of model.approvals) if (approval.agent === agent.name) model.approvals.delete(key);
      agent.awaiting = 0;
      model.changes.approvals = true;
      return;
    default:
  }
}

/**
 * @param {Model} model
 * @param {Envelope} event
 * @param {any} data
 */
function applyToScene(model, event, data) {
  switch (event.type) {
    case 'log.opened':
      // A resume takes the scene up where the segment before left it (stopped from outside, or
      // cut off): it runs again.
      if (data.kind === 'resume') {
        delete model.stopped;
        model.resumes++;
      }
      return;
    case 'scene.started':
      model.started = true;
      delete model.stopped;
      if (event.scene !== undefined && model.scene === '') model.scene = event.scene;
      for (const name of data.agents ?? []) agentView(model, String(name));
      // The world the scene started from: a log replays its changes on top of it.
      if (data.world !== undefined && data.world !== null && typeof data.world === 'object') {
        model.world = data.world;
        model.changes.world.push('');
      }
      return;
    case 'scene.tick':
      model.tick = Number(data.tick);
      if (model.tick > model.shownTick) model.shownTick = model.tick;
      return;
    case 'scene.stopped':
      model.stopped = { reason: String(data.reason), detail: data.detail, tick: Number(data.tick) };
      return;
    case 'world.changed':
      model.world = withChange(model.world, String(data.path), data.value);
      model.changes.world.push(String(data.path));
      return;
    case 'inspector.paused':
      if (typeof data.paused === 'boolean') model.paused = data.paused;
      return;
    default:
  }
}

/**
 * Whether the view shows a log that its writer left open (killed, crashed) and has reached its
 * last event: the run did not end, and nothing more will come.
 *
 * @param {Model} model
 */
export function isInterrupted(model) {
  return model.mode === 'log' && model.ended === 'interrupted' && model.stopped === undefined && model.eventCount >= model.logEvents;
}

/**
 * Whether an event is where a log was resumed: a run taken up again after its writer stopped.
 *
 * @param {Envelope} event
 */
export function isResume(event) {
  return event.type === 'log.opened' && /** @type {any} */ (event.data)?.kind === 'resume';
}

/**
 * Notes a gap in the stream: events the server could no longer replay, or that this page's
 * backpressure policy dropped (`missed` when the server could count them).
 *
 * @param {Model} model
 * @param {number | null} missed
 * @param {number} [kept] how many events the server's history holds
 */
export function noteGap(model, missed, kept) {
  model.gaps++;
  if (typeof missed === 'number') model.missed += missed;
  if (typeof kept === 'number') model.kept = kept;
  model.changes.header = true;
}

/**
 * Starts a page that opened late from what the events it can no longer get said of each agent
 * (the server's summary of them): turns, counts, what woke it, its last words and how its last
 * run ended. The held events that follow count on from there, so the totals are the whole run's.
 * The machine state stays the snapshot's (it is newer); the replay moves it on. Only before the
 * first event: a page that already counted events cannot tell which of them the summary holds.
 *
 * @param {Model} model
 * @param {number | null} missed
 * @param {readonly import('./panel.js').AgentSummary[]} earlier
 */
export function applyEarlier(model, missed, earlier) {
  if (model.eventCount > 0) return;
  if (typeof missed === 'number') model.missedEarlier = missed;
  for (const summary of earlier) {
    if (summary === null || typeof summary !== 'object' || typeof summary.name !== 'string') continue;
    const view = agentView(model, summary.name);
    view.turns = Number(summary.turns) || 0;
    view.round = Number(summary.round) || 0;
    view.calls = Number(summary.calls) || 0;
    view.failures = Number(summary.failures) || 0;
    view.corrections = Number(summary.corrections) || 0;
    if (Array.isArray(summary.tools)) view.tools = summary.tools.map(String);
    if (typeof summary.protocol === 'string') view.protocol = summary.protocol;
    if (typeof summary.trigger === 'string') view.trigger = summary.trigger;
    if (typeof summary.lastReason === 'string') view.lastReason = summary.lastReason;
    if (typeof summary.lastSaid === 'string') view.lastSaid = summary.lastSaid;
  }
  model.changes.header = true;
}

/**
 * @param {string} agent
 * @param {unknown} callId
 * @param {'call' | 'result'} [kind] a call's result is asked about after the call itself
 */
export function approvalKey(agent, callId, kind = 'call') {
  return kind === 'call' ? `${agent}\u0000${String(callId)}` : `${agent}\u0000${String(callId)}\u0000result`;
}

/**
 * @param {Model} model
 * @param {string} agent
 */
function countAwaiting(model, agent) {
  let count = 0;
  for (const approval of model.approvals.values()) if (approval.agent === agent) count++;
  return count;
}
