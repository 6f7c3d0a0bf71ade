// @ts-check
/**
 * The transcript as data: per agent, the turns, speech (streamed in from `llm.delta`, settled by
 * `agent.said`), tool calls with their status, corrections and observations. Pure (no DOM), so
 * log mode can rebuild it from the first N events and the renderer only mirrors what changed.
 */

import { resultText } from './format.js';

/** @typedef {import('./model.js').Envelope} Envelope */

/**
 * @typedef {'parsed' | 'awaiting' | 'approved' | 'denied' | 'started' | 'completed' | 'failed' | 'rejected'} CallStatus
 * @typedef {{ seq: number, rev: number, agent: string, tick: number, dropped?: boolean, hidden?: boolean }} EntryBase
 * @typedef {EntryBase & { kind: 'turn', reason: string, detail?: string }} TurnEntry
 * @typedef {EntryBase & { kind: 'speech', text: string, to?: string, round: number, attempt: number, phase: 'streaming' | 'written' | 'said' | 'superseded' }} SpeechEntry
 * @typedef {EntryBase & { kind: 'thought', text: string, round: number, attempt: number, phase: 'streaming' | 'written' | 'superseded' }} ThoughtEntry
 * @typedef {EntryBase & { kind: 'call', callId: string, name: string, args: unknown, status: CallStatus, attempt: number,
 *   durationMs?: number, output?: unknown, error?: { kind: string, message: string, retryable?: boolean, hint?: string },
 *   rejection?: { code: string, message: string, suggestion?: string, issues?: unknown[] }, approval?: { approved: boolean, reason?: string },
 *   repair?: { by: string, name: string, args: unknown }, resultApproval?: { state: 'waiting' | 'approved' | 'rejected', reason?: string },
 *   zombie?: string }} CallEntry
 * @typedef {EntryBase & { kind: 'malformed', code: string, message: string }} MalformedEntry
 * @typedef {EntryBase & { kind: 'observation', text: string, ok: boolean }} ObservationEntry
 * @typedef {EntryBase & { kind: 'note', tone: 'info' | 'warn' | 'error', label: string, text: string }} NoteEntry
 * @typedef {TurnEntry | SpeechEntry | ThoughtEntry | CallEntry | MalformedEntry | ObservationEntry | NoteEntry} Entry
 */

/**
 * An entry's own fields, before the transcript numbers it (distributed over the kinds).
 *
 * @template T
 * @typedef {T extends Entry ? Omit<T, 'seq' | 'rev' | 'agent' | 'tick'> : never} FieldsOf
 */

/** Entries kept in memory; the page shows fewer (render-transcript.js). */
export const TRANSCRIPT_KEEP = 4000;

/** Turns that end normally say nothing worth a line; these do. */
const NOTABLE_ENDINGS = new Set(['max_rounds', 'budget', 'aborted', 'error']);

/**
 * @typedef {{
 *   entries: Entry[],
 *   calls: Map<string, CallEntry>,
 *   streams: Map<string, SpeechEntry>,
 *   thoughts: Map<string, ThoughtEntry>,
 *   seq: number,
 *   changed: Set<Entry>,
 * }} TranscriptModel
 */

/** @returns {TranscriptModel} */
export function createTranscript() {
  return { entries: [], calls: new Map(), streams: new Map(), thoughts: new Map(), seq: 0, changed: new Set() };
}

/**
 * Updates the transcript for one event. `tick` is the scene's tick when it happened.
 *
 * @param {TranscriptModel} model
 * @param {Envelope} event
 * @param {number} tick
 */
export function applyToTranscript(model, event, tick) {
  const agent = event.agent ?? '';
  const data = /** @type {any} */ (event.data ?? {});
  /** @param {FieldsOf<Entry>} fields */
  const add = (fields) => push(model, /** @type {Entry} */ ({ ...fields, seq: 0, rev: 0, agent, tick }));

  switch (event.type) {
    case 'agent.triggered':
      add({ kind: 'turn', reason: data.reason, detail: data.detail });
      return;
    case 'llm.request':
      // A new attempt while the last one was still streaming: the old text will not be said.
      supersede(model, agent, (stream) => stream.phase === 'streaming');
      return;
    case 'llm.delta': {
      const attempt = Number(data.attempt ?? 1);
      let stream = model.streams.get(agent);
      if (stream === undefined || stream.phase !== 'streaming' || stream.attempt !== attempt) {
        if (stream?.phase === 'streaming') supersede(model, agent, () => true);
        stream = /** @type {SpeechEntry} */ (add({ kind: 'speech', text: '', round: data.round ?? 0, attempt, phase: 'streaming' }));
        model.streams.set(agent, stream);
      }
      stream.text += String(data.text ?? '');
      touch(model, stream);
      return;
    }
    case 'llm.reasoning': {
      const attempt = Number(data.attempt ?? 1);
      let thought = model.thoughts.get(agent);
      if (thought === undefined || thought.phase !== 'streaming' || thought.attempt !== attempt) {
        thought = /** @type {ThoughtEntry} */ (add({ kind: 'thought', text: '', round: data.round ?? 0, attempt, phase: 'streaming' }));
        model.thoughts.set(agent, thought);
      }
      thought.text += String(data.text ?? '');
      touch(model, thought);
      return;
    }
    case 'llm.response': {
      closeThought(model, agent, 'written');
      const stream = model.streams.get(agent);
      if (stream?.phase !== 'streaming') return;
      stream.phase = 'written';
      // Deltas of only whitespace (the text was all <ACTION>) are not speech.
      if (stream.text.trim() === '') hide(model, stream, agent);
      touch(model, stream);
      return;
    }
    case 'llm.superseded': {
      // The attempt's deltas are void: the retry streams its text again from scratch.
      const matches = (/** @type {SpeechEntry | ThoughtEntry} */ entry) => data.attempt === undefined || entry.attempt === Number(data.attempt);
      supersede(model, agent, matches);
      const thought = model.thoughts.get(agent);
      if (thought !== undefined && matches(thought)) closeThought(model, agent, 'superseded');
      return;
    }
    case 'llm.error':
      supersede(model, agent, (stream) => stream.phase === 'streaming');
      closeThought(model, agent, 'superseded');
      add({
        kind: 'note',
        tone: data.retryable ? 'warn' : 'error',
        label: `model ${data.kind ?? 'error'}${data.attempt ? `, attempt ${data.attempt}` : ''}`,
        text: `${data.message ?? ''}${data.retryable ? ' (retrying)' : ''}`,
      });
      return;
    case 'agent.said': {
      const stream = model.streams.get(agent);
      const text = String(data.text ?? '');
      // The streamed text becomes the said text (what the parser settled on, reasoning removed).
      if (stream !== undefined && (stream.phase === 'written' || stream.phase === 'streaming')) {
        stream.text = text;
        stream.phase = 'said';
        stream.hidden = false;
        if (data.to !== undefined) stream.to = data.to;
        model.streams.delete(agent);
        touch(model, stream);
      } else {
        add({ kind: 'speech', text, to: data.to, round: 0, attempt: 1, phase: 'said' });
      }
      return;
    }
    case 'action.parsed':
      for (const item of data.calls ?? []) callEntry(model, add, agent, item.callId, item.name, item.args);
      return;
    case 'action.malformed':
      add({ kind: 'malformed', code: data.code, message: String(data.message ?? '') });
      return;
    case 'action.trailing':
      add({ kind: 'note', tone: 'info', label: 'ignored after </ACTION>', text: String(data.text ?? '') });
      return;
    case 'tool.rejected':
      update(callEntry(model, add, agent, data.callId, data.name, data.args), model, (call) => {
        call.status = 'rejected';
        call.rejection = { code: data.code, message: String(data.message ?? ''), suggestion: data.suggestion, issues: data.issues };
      });
      return;
    case 'tool.approval.requested':
      update(callEntry(model, add, agent, data.callId, data.name, data.args), model, (call) => (call.status = 'awaiting'));
      return;
    case 'tool.approval.resolved':
      update(callEntry(model, add, agent, data.callId, data.name), model, (call) => {
        call.approval = { approved: Boolean(data.approved), reason: data.reason };
        if (call.status === 'awaiting' || call.status === 'parsed') call.status = data.approved ? 'approved' : 'denied';
      });
      return;
    case 'tool.repaired':
      update(callEntry(model, add, agent, data.callId, data.name), model, (call) => {
        call.repair = { by: String(data.by), name: String(data.after?.name), args: data.after?.args };
        call.name = String(data.after?.name ?? call.name);
        call.args = data.after?.args ?? call.args;
      });
      return;
    case 'tool.result.approval.requested':
      update(callEntry(model, add, agent, data.callId, data.name), model, (call) => (call.resultApproval = { state: 'waiting' }));
      return;
    case 'tool.result.approval.resolved':
      update(callEntry(model, add, agent, data.callId, data.name), model, (call) => {
        call.resultApproval = { state: data.approved ? 'approved' : 'rejected', reason: data.reason };
      });
      return;
    case 'tool.started':
      update(callEntry(model, add, agent, data.callId, data.name, data.args), model, (call) => {
        call.status = 'started';
        call.attempt = data.attempt ?? 1;
        call.args = data.args ?? call.args;
      });
      return;
    case 'tool.completed':
      update(callEntry(model, add, agent, data.callId, data.name, data.args), model, (call) => {
        call.status = 'completed';
        call.output = data.parts === undefined ? data.output : resultText(data.output);
        call.durationMs = data.durationMs;
        call.attempt = data.attempt ?? call.attempt;
        delete call.error;
      });
      return;
    case 'tool.failed':
      update(callEntry(model, add, agent, data.callId, data.name, data.args), model, (call) => {
        call.status = 'failed';
        call.error = data.error;
        call.durationMs = data.durationMs;
        call.attempt = data.attempt ?? call.attempt;
      });
      return;
    case 'tool.zombie':
      update(callEntry(model, add, agent, data.callId, data.name), model, (call) => (call.zombie = data.settled));
      return;
    case 'agent.observation':
      add({ kind: 'observation', text: String(data.text ?? ''), ok: Boolean(data.ok) });
      return;
    case 'agent.finished':
      supersede(model, agent, (stream) => stream.phase === 'streaming');
      closeThought(model, agent, 'written');
      if (NOTABLE_ENDINGS.has(data.reason)) {
        add({ kind: 'note', tone: data.reason === 'error' ? 'error' : 'warn', label: `finished: ${data.reason}`, text: String(data.error ?? '') });
      }
      return;
    case 'budget.exhausted':
      add({ kind: 'note', tone: 'error', label: 'budget exhausted', text: String(data.message ?? '') });
      return;
    case 'scene.event':
      add({ kind: 'note', tone: 'info', label: `event ${data.name}`, text: data.payload === undefined ? '' : safeText(data.payload) });
      return;
    case 'bus.error':
    case 'log.error':
      add({ kind: 'note', tone: 'error', label: event.type, text: String(data.message ?? '') });
      return;
    default:
  }
}

/**
 * @param {TranscriptModel} model
 * @param {Entry} entry
 */
function push(model, entry) {
  entry.seq = ++model.seq;
  model.entries.push(entry);
  model.changed.add(entry);
  // Evict in chunks so a long run does not shift the array on every event.
  if (model.entries.length > TRANSCRIPT_KEEP * 1.25) {
    for (const old of model.entries.splice(0, model.entries.length - TRANSCRIPT_KEEP)) {
      old.dropped = true;
      model.changed.add(old);
      if (old.kind === 'call') model.calls.delete(callKey(old.agent, old.callId));
      if (old.kind === 'speech' && model.streams.get(old.agent) === old) model.streams.delete(old.agent);
      if (old.kind === 'thought' && model.thoughts.get(old.agent) === old) model.thoughts.delete(old.agent);
    }
  }
  return entry;
}

/**
 * @param {TranscriptModel} model
 * @param {Entry} entry
 */
function touch(model, entry) {
  entry.rev++;
  model.changed.add(entry);
}

/**
 * @template {Entry} E
 * @param {E} entry
 * @param {TranscriptModel} model
 * @param {(entry: E) => void} change
 */
function update(entry, model, change) {
  change(entry);
  touch(model, entry);
}

/**
 * @param {TranscriptModel} model
 * @param {SpeechEntry} stream
 * @param {string} agent
 */
function hide(model, stream, agent) {
  stream.hidden = true;
  if (model.streams.get(agent) === stream) model.streams.delete(agent);
}

/**
 * Marks the agent's current speech superseded (struck through), when `which` says so.
 *
 * @param {TranscriptModel} model
 * @param {string} agent
 * @param {(stream: SpeechEntry) => boolean} which
 */
function supersede(model, agent, which) {
  const stream = model.streams.get(agent);
  if (stream === undefined || !which(stream)) return;
  stream.phase = 'superseded';
  if (stream.text.trim() === '') stream.hidden = true;
  model.streams.delete(agent);
  touch(model, stream);
}

/**
 * Ends the agent's streaming reasoning, if any.
 *
 * @param {TranscriptModel} model
 * @param {string} agent
 * @param {'written' | 'superseded'} phase
 */
function closeThought(model, agent, phase) {
  const thought = model.thoughts.get(agent);
  if (thought === undefined) return;
  model.thoughts.delete(agent);
  if (thought.phase !== 'streaming' && phase !== 'superseded') return;
  thought.phase = phase;
  touch(model, thought);
}

/**
 * @param {string} agent
 * @param {string} callId
 */
function callKey(agent, callId) {
  return `${agent}\u0000${callId}`;
}

/**
 * The entry of a call, created on the first event that names it.
 *
 * @param {TranscriptModel} model
 * @param {(fields: FieldsOf<Entry>) => Entry} add
 * @param {string} agent
 * @param {string} callId
 * @param {string} name
 * @param {unknown} [args]
 * @returns {CallEntry}
 */
function callEntry(model, add, agent, callId, name, args) {
  const key = callKey(agent, String(callId));
  const known = model.calls.get(key);
  if (known !== undefined) return known;
  const created = /** @type {CallEntry} */ (add({ kind: 'call', callId: String(callId), name: String(name), args: args ?? {}, status: 'parsed', attempt: 1 }));
  model.calls.set(key, created);
  return created;
}

/** @param {unknown} value */
function safeText(value) {
  try {
    return typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  } catch {
    return '[unserializable]';
  }
}
