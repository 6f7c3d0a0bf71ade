import type { Envelope } from '../bus/events.js';
import type { IdSource } from '../bus/ids.js';
import type { Redactor } from '../bus/safe-json.js';
import type { ModelResponse } from '../llm/types.js';
import type { ToolCall } from '../protocol/types.js';
import type { RecordedAttempt, RecordedEnd } from '../tools/dispatch-options.js';
import { firstDifference, loggedForm, sameEvent } from './event-match.js';
import { answerOf, approvalKey, hintFor, outcomeOf, pending, streamOf, type Divergence, type Pending, type ReplayMode, type ReplayTarget } from './replay-events.js';
import { INTERRUPTED, ReplayWaits } from './replay-waits.js';

export type { Divergence, ReplayMode, ReplayTarget } from './replay-events.js';
export { LiveAgain } from './replay-waits.js';

// Events about the log, the bus or a viewer, not about the scene: never compared.
const IGNORED: ReadonlySet<string> = new Set(['bus.error', 'log.error', 'log.opened', 'log.checkpoint', 'inspector.paused']);
// What a model call shows while it streams: the driver shows it again from the log.
const STREAMED: ReadonlySet<string> = new Set(['llm.delta', 'llm.reasoning', 'llm.tool_call.delta', 'llm.superseded']);
// What a host says or does from outside: published again as the log has it.
const HOST_MADE: ReadonlySet<string> = new Set(['scene.event', 'agent.said', 'world.changed']);

/**
 * Runs a scene (or agents) again in lockstep with its log. Each event the run publishes is
 * checked against the next one the log holds *for the same agent* (the scene's own events form one
 * more sequence) and gets its logged id: each agent must do exactly what it did, while the
 * interleaving of different agents' events, which depends on when promises settled, may differ.
 * What the run cannot make by itself comes from the log at the moment the log has it: a model's
 * replies (and what it streamed), the host's approvals, and, on resume, the outcomes of calls,
 * with the changes those calls made to the world, to private state and on the bus. An agent whose
 * recorded events are used up goes on live at once (new ids, events written); once the whole log
 * is used up, so does the run: models asked, calls run.
 */
export class ReplayDriver {
  readonly mode: ReplayMode;
  private readonly expected: readonly Envelope[];
  private readonly lines: readonly number[];
  private readonly redactor: Redactor;
  private target: ReplayTarget | undefined;
  /** The first event of the log not yet matched (or ignored). */
  private cursor = 0;
  /** Events of the log matched so far, by position. */
  private readonly consumed: Uint8Array;
  /** Each agent's events in the log (`''`: the scene's and the host's), by position, and how far each is matched. */
  private readonly streams = new Map<string, { positions: number[]; next: number }>();
  /** Events of the run matched with the log's: on record already, never written again. */
  private readonly matched = new WeakSet<Envelope>();
  /** Events of agents whose recorded events were used up, made before the whole log was: written. */
  private readonly early = new WeakSet<Envelope>();
  /** Call attempts whose start the log holds (`callId#attempt`): only those take their outcome from it. */
  private readonly recordedStarts = new Set<string>();
  /** Approval requests seen and not yet decided (`call:` or `result:` + callId): asked again, they are a resume's. */
  private readonly undecided = new Set<string>();
  private state: 'silent' | 'replaying' | 'live' | 'diverged' = 'silent';
  private liveIds: IdSource;
  private silentCount = 0;
  private pumpQueued = false;
  /** Model calls and call attempts waiting for what the log holds. */
  private readonly waits = new ReplayWaits();
  /** Ids of recorded calls' starts and of what they made: events that follow from them are the log's to make. */
  private readonly made = new Set<string>();
  /**
   * Replay only: the call attempts a crash cut (`callId#attempt`, see `interruptedAttempts`), and
   * the ids of their starts (each with its call id) until the log's `tool.interrupted`. What such an attempt
   * did before the crash (a world change, speech: what its start caused, but its own `tool.*`
   * events) is in the log and is the log's to make: the replay does not run the attempt, as the
   * resume did not. What a rerun does after the interruption is the run's again.
   */
  private readonly cut: ReadonlySet<string>;
  private readonly cutStarts = new Map<string, string>();
  /** Agents with a recorded call in flight: a world or private change of theirs without a cause is the call's. */
  private readonly calling = new Map<string, number>();
  /** Agents whose model call was asked (its `llm.request` is behind) and not yet answered. */
  private readonly askingAgents = new Set<string>();
  private readonly ended: Pending<void>;
  divergence: Divergence | undefined;

  constructor(mode: ReplayMode, expected: readonly Envelope[], lines: readonly number[], redactor: Redactor, liveIds: IdSource) {
    this.mode = mode;
    this.expected = expected;
    this.lines = lines;
    this.redactor = redactor;
    this.liveIds = liveIds;
    this.ended = pending<void>();
    this.consumed = new Uint8Array(expected.length);
    this.cut = mode === 'replay' ? interruptedAttempts(expected) : new Set();
    expected.forEach((event, index) => {
      if (IGNORED.has(event.type)) return;
      const key = streamOf(event);
      const stream = this.streams.get(key);
      if (stream === undefined) this.streams.set(key, { positions: [index], next: 0 });
      else stream.positions.push(index);
    });
  }

  /** Resolves once the run has used up the log (or diverged from it). */
  get done(): Promise<void> {
    return this.ended.promise;
  }

  get replaying(): boolean {
    return this.state === 'replaying';
  }

  /**
   * Starts following the log: every event published from now on is checked against it. Before,
   * while a scene is built and restored from a checkpoint, events are neither checked nor written.
   */
  follow(): void {
    if (this.state === 'silent') this.state = 'replaying';
  }

  /** Hands the driver what it drives, once built, and starts making what the log makes. */
  begin(target: ReplayTarget): void {
    this.target = target;
    this.follow();
    this.pump();
  }

  /**
   * The ids of the bus: new ones, except while replaying, when the tap gives each event its
   * logged id (or a new one) as it checks it.
   */
  readonly ids: IdSource = () => {
    if (this.state === 'silent') return `replay-silent-${++this.silentCount}`;
    if (this.state === 'replaying') return 'replay-unchecked';
    return this.liveIds();
  };

  /** Whether the log should write an event: what the run made that the log does not hold. */
  readonly accept = (event: Envelope): boolean => {
    if (this.state === 'silent' || this.matched.has(event)) return false;
    return this.state === 'live' || IGNORED.has(event.type) || this.early.has(event);
  };

  /** Whether an agent's model call is the one the log holds: a deliberation asked and not yet answered. */
  asking(agent: string): boolean {
    return this.state === 'replaying' && this.askingAgents.has(agent);
  }

  /** Sees every event as it is published: checks it against the log, gives it its id, and moves on. */
  readonly tap = (event: Envelope): void => {
    if (this.state !== 'replaying') return;
    const published = event as { id: string };
    if (IGNORED.has(event.type)) {
      published.id = this.liveIds();
      return;
    }
    const stream = this.streams.get(streamOf(event));
    const at = stream === undefined ? undefined : this.nextOf(stream);
    if (at === undefined) {
      // This agent's recorded events are used up while others' are not: what it does now is new.
      if (this.mode === 'replay') return this.diverge(undefined, event, undefined);
      published.id = this.liveIds();
      this.early.add(event);
      return;
    }
    const expected = this.expected[at]!;
    const wanted = loggedForm(expected, this.redactor);
    const got = loggedForm(event, this.redactor);
    if (!sameEvent(wanted, got)) {
      // Stopped from outside while the log is replayed (Ctrl-C, SIGTERM): the shutting down is
      // new, and written; the calls waiting for their recorded outcomes count as interrupted.
      if (this.mode === 'resume' && event.type === 'scene.stopping') {
        this.goLive();
        this.early.add(event);
        published.id = this.liveIds();
        return;
      }
      return this.diverge(expected, event, firstDifference(wanted, got), at);
    }
    published.id = expected.id;
    this.consumed[at] = 1;
    stream!.next++;
    this.matched.add(event);
    this.note(event);
    // Used up: what the run publishes next, in this same step, is new, and is written.
    if (this.nextIndex() >= this.expected.length) this.goLive();
    else this.schedulePump();
  };

  /** The position of a stream's next event not yet matched. */
  private nextOf(stream: { positions: number[]; next: number }): number | undefined {
    return stream.positions[stream.next];
  }

  /**
   * A model call's answer as the log holds it, for the agent that just asked: at once when it is
   * the log's next event, else when the run reaches it. `undefined`: the log holds none (ask the model).
   */
  reply(agent: string): ModelResponse | Promise<ModelResponse> | undefined {
    // What the model streamed comes first, now: a reply that came at once comes at once again.
    // The log used up (before, or by making that), the model is asked.
    this.makeOwned();
    if (this.state !== 'replaying') return undefined;
    const at = this.findFrom(this.cursor, (event) => event.agent === agent && (event.type === 'llm.response' || event.type === 'llm.error'));
    // Asked, but the log ends before the answer: ask the model once the log is used up.
    if (at === undefined) return this.waits.reply(agent);
    if (at === this.nextIndex() && !this.waits.awaitsReply(agent)) return answerOf(this.expected[at]!);
    this.schedulePump();
    return this.waits.reply(agent);
  }

  /**
   * Replay only: the interruption of an attempt a crash cut, once the log has made what the attempt
   * did before the crash: at once when the log's next event is its `tool.interrupted`, else when
   * the log reaches it. `undefined` for any other attempt: it runs.
   */
  interruption(call: ToolCall, attempt: number): RecordedAttempt | Promise<RecordedAttempt> | undefined {
    if (!this.cut.has(`${call.callId}#${attempt}`)) return undefined;
    this.makeOwned();
    if (this.state !== 'replaying') return INTERRUPTED;
    const at = this.findFrom(this.cursor, (event) => event.type === 'tool.interrupted' && (event.data as { callId: string }).callId === call.callId);
    if (at === undefined || at === this.nextIndex()) return INTERRUPTED;
    this.schedulePump();
    return this.waits.interruption(call.callId, INTERRUPTED);
  }

  /** A call attempt's outcome as the log holds it (resume only): at once when it is next, else when reached. */
  attempt(call: ToolCall, attempt: number): RecordedAttempt | Promise<RecordedAttempt> | undefined {
    if (this.mode !== 'resume') return undefined;
    // A call the log never saw start is new: it runs.
    if (!this.recordedStarts.has(`${call.callId}#${attempt}`)) return undefined;
    // What the call did comes first, now: a call that ended at once ends at once again. The log
    // used up (at its start, or by making what it did), the attempt never ended: a crash cut it.
    this.makeOwned();
    if (this.state !== 'replaying') return INTERRUPTED;
    const ends = (event: Envelope, data = event.data as { callId: string; attempt: number }): boolean =>
      (event.type === 'tool.completed' || event.type === 'tool.failed') && data.callId === call.callId && data.attempt === attempt;
    const at = this.findFrom(this.cursor, ends);
    // An earlier resume found this attempt interrupted (and may have recorded how that ended):
    // the run says so again when the log does, and the recorded end holds.
    const interruptedAt = this.findFrom(this.cursor, (event) => event.type === 'tool.interrupted' && (event.data as { callId: string }).callId === call.callId);
    if (interruptedAt !== undefined && (at === undefined || interruptedAt < at)) {
      const outcome: RecordedAttempt = at === undefined ? INTERRUPTED : { kind: 'interrupted', then: outcomeOf(this.expected[at]!) as RecordedEnd };
      if (interruptedAt === this.nextIndex()) return outcome;
      this.schedulePump();
      return this.waits.interruption(call.callId, outcome);
    }
    if (at !== undefined && at === this.nextIndex()) return outcomeOf(this.expected[at]!);
    this.schedulePump();
    return this.waits.outcome(`${call.callId}#${attempt}`);
  }

  private note(event: Envelope): void {
    const approval = approvalKey(event);
    if (approval !== undefined) {
      if (event.type.endsWith('.requested')) this.undecided.add(approval);
      else this.undecided.delete(approval);
    }
    if (event.agent !== undefined) {
      if (event.type === 'llm.request') this.askingAgents.add(event.agent);
      else if (event.type === 'llm.response' || event.type === 'agent.finished') this.askingAgents.delete(event.agent);
    }
    // On resume no recorded call runs: what it did (world and private changes, nested calls,
    // speech) is the log's to make, the events that follow from its start.
    if (this.mode === 'resume' && event.type === 'tool.started') {
      const { callId, attempt } = event.data as { callId: string; attempt: number };
      this.recordedStarts.add(`${callId}#${attempt}`);
      this.made.add(event.id);
      if (event.agent !== undefined) this.calling.set(event.agent, (this.calling.get(event.agent) ?? 0) + 1);
    } else if (event.type === 'tool.started' && this.cut.size > 0) {
      const { callId, attempt } = event.data as { callId: string; attempt: number };
      if (this.cut.has(`${callId}#${attempt}`)) this.cutStarts.set(event.id, callId);
    } else if (event.type === 'tool.interrupted' && this.cutStarts.size > 0) {
      // Rare (once per cut attempt), so the map is keyed for `owned`, which asks of every event.
      const { callId } = event.data as { callId: string };
      for (const [start, cut] of this.cutStarts) if (cut === callId) this.cutStarts.delete(start);
    }
    // What a call made follows from it; a turn it woke (`agent.triggered`) is the run's own.
    if (event.cause !== undefined && event.type !== 'agent.triggered' && this.made.has(event.cause)) this.made.add(event.id);
    if ((event.type === 'tool.completed' || event.type === 'tool.failed') && event.agent !== undefined && this.calling.has(event.agent)) {
      const left = (this.calling.get(event.agent) ?? 1) - 1;
      if (left <= 0) this.calling.delete(event.agent);
      else this.calling.set(event.agent, left);
    }
  }

  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** Makes what the log holds and the run cannot make by itself, in the log's order, until the run must act. */
  private pump(): void {
    this.makeOwned();
    if (this.state !== 'replaying') return;
    const next = this.expected[this.nextIndex()];
    if (next === undefined) return this.goLive();
    this.answer(next);
  }

  /** Makes the log's next events while they are the log's to make. */
  private makeOwned(): void {
    while (this.state === 'replaying' && this.target !== undefined) {
      const next = this.expected[this.nextIndex()];
      if (next === undefined || !this.owned(next)) return;
      this.make(next);
    }
  }

  /**
   * Whether the run cannot make `event` itself, so the log makes it: what a model streamed, what
   * follows from a recorded call (resume), a change without a cause by an agent with a recorded
   * call in flight, and what the host did from outside (events with no cause and no agent's run).
   */
  private owned(event: Envelope): boolean {
    if (STREAMED.has(event.type)) return event.agent !== undefined && this.waits.awaitsReply(event.agent);
    // A request made again for a decision still waiting: what an earlier resume did on going live.
    const approval = approvalKey(event);
    if (approval !== undefined && event.type.endsWith('.requested') && this.undecided.has(approval)) return true;
    if (event.cause !== undefined && this.cutStarts.has(event.cause) && !event.type.startsWith('tool.')) return true;
    if (event.cause !== undefined) return event.type !== 'agent.triggered' && this.made.has(event.cause);
    if (event.type === 'world.changed' || event.type === 'private.changed') return event.agent === undefined || this.calling.has(event.agent);
    return HOST_MADE.has(event.type);
  }

  /** Publishes (or applies) a logged event the run cannot make itself; the tap checks it like any other. */
  private make(event: Envelope): void {
    const target = this.target!;
    const data = event.data as Record<string, unknown>;
    if (event.type === 'world.changed') return target.applyWorld(data.path as string, data.value, { agent: event.agent, cause: event.cause });
    if (event.type === 'private.changed') return target.applyPrivate(event.agent!, data.path as string, data.value, event.cause);
    target.publish(event);
  }

  /** Hands the run what it waits for when the log's next event is its: a reply, an outcome, a decision. */
  private answer(next: Envelope): void {
    this.waits.handOver(next);
    if ((next.type === 'tool.approval.resolved' || next.type === 'tool.result.approval.resolved') && next.agent !== undefined) {
      const agent = this.target!.agent(next.agent);
      const { callId, approved, reason } = next.data as { callId: string; approved: boolean; reason?: string };
      if (agent === undefined) return;
      if (next.type === 'tool.approval.resolved') {
        if (approved) agent.approve(callId);
        else agent.deny(callId, reason ?? 'denied');
      } else if (approved) agent.approveResult(callId);
      else agent.rejectResult(callId, reason ?? 'rejected');
    }
  }

  /** The log is used up: everything still waiting goes on live. */
  private goLive(): void {
    this.state = 'live';
    this.waits.release();
    this.ended.resolve();
  }

  private diverge(expected: Envelope | undefined, actual: Envelope | undefined, field: string | undefined, at?: number): void {
    if (this.state === 'diverged') return;
    this.state = 'diverged';
    const index = at ?? this.nextIndex();
    const describe = (event: Envelope | undefined) => (event === undefined ? undefined : { type: event.type, ...(event.agent !== undefined && { agent: event.agent }) });
    this.divergence = {
      index: index + 1,
      line: this.lines[index] ?? 0,
      ...(expected !== undefined && { expected: describe(expected)! }),
      ...(actual !== undefined && { actual: describe(actual)! }),
      ...(field !== undefined && { field }),
      hint: hintFor(expected, actual, field),
    };
    this.ended.resolve();
  }

  private nextIndex(): number {
    this.skipIgnored();
    return this.cursor;
  }

  private skipIgnored(): void {
    while (this.cursor < this.expected.length && (this.consumed[this.cursor] === 1 || IGNORED.has(this.expected[this.cursor]!.type))) this.cursor++;
  }

  /** The first event from `from` on not yet matched that passes `test`. */
  private findFrom(from: number, test: (event: Envelope) => boolean): number | undefined {
    for (let index = from; index < this.expected.length; index++) if (this.consumed[index] === 0 && test(this.expected[index]!)) return index;
    return undefined;
  }
}

/** The attempts a crash interrupted (`callId#attempt`): each `tool.interrupted` and the start before it. */
export function interruptedAttempts(events: readonly Envelope[]): Set<string> {
  const attempts = new Map<string, number>();
  const interrupted = new Set<string>();
  for (const event of events) {
    const data = event.data as { callId?: string; attempt?: number };
    if (event.type === 'tool.started') attempts.set(data.callId!, data.attempt!);
    else if (event.type === 'tool.interrupted') interrupted.add(`${data.callId!}#${attempts.get(data.callId!) ?? 1}`);
  }
  return interrupted;
}
