import type { PendingObservation } from '../agent/agent-options.js';
import type { AgentRuntime } from '../agent/agent-runtime.js';
import type { Envelope, Pattern, RunReason, TriggerReason } from '../bus/events.js';
import type { ModelRequest, Usage } from '../llm/types.js';
import type { Heard, Perception, SceneAgent, SceneAgentUsage } from './types.js';
import type { JsonValue, WorldReader } from './world-types.js';
import { addUsage, type Budget } from '../agent/budget.js';

/** Why an agent is due to deliberate, and how far down a chain of replies that puts it. */
export type PendingTrigger = { reason: TriggerReason; detail?: string; cause?: string; depth: number };

/** How a member is woken, from its `triggers`. */
export type MemberTriggers = {
  start: boolean;
  speech: boolean;
  addressed: boolean;
  timers: readonly { every: number; offset: number }[];
  /** Bus patterns that wake the member, each with its optional predicate. */
  on: readonly { on: Pattern; where?: (event: Envelope) => boolean }[];
};

/** A member between turns as plain data (its agent's snapshot beside it), for a scene's snapshot. */
export type MemberSnapshot = {
  name: string;
  private: Record<string, JsonValue>;
  pending?: PendingTrigger;
  trigger?: PendingTrigger;
  /** Null before the first turn. */
  lastThinkTick: number | null;
  turns: number;
  retired: boolean;
  lastReason?: RunReason;
  lastObservation?: PendingObservation;
  heardUpTo: number;
  events?: Envelope[];
  /** The tokens its turns have spent (absent when none, and in snapshots that predate it). */
  tokens?: Usage;
};

const NO_EVENTS: readonly Envelope[] = Object.freeze([]);
const NO_SPEECH: readonly Heard[] = Object.freeze([]);
/** Subscribed events a member keeps between turns; older ones are dropped. */
const MAX_EVENTS = 20;

/**
 * One agent of a scene: its runtime plus what the scene tracks for it — private state, what it
 * heard, its pending trigger, think rate and budget. Kept small and flat: a crowd scene holds a
 * hundred thousand of them.
 */
export class SceneMember implements SceneAgent {
  readonly name: string;
  readonly runtime: AgentRuntime;
  readonly triggers: MemberTriggers;
  readonly thinkEvery: number;
  readonly rounds: number;
  readonly budget: Budget | undefined;
  /** Brain-driven members get their perception as an object, not as prompt text. */
  readonly scripted: boolean;
  readonly onSceneModel: boolean;
  privateState: Record<string, JsonValue>;
  pending: PendingTrigger | undefined = undefined;
  /** The trigger of the turn in flight (or the last one). */
  trigger: PendingTrigger | undefined = undefined;
  lastThinkTick = Number.NEGATIVE_INFINITY;
  turns = 0;
  busy = false;
  retired = false;
  lastReason: RunReason | undefined = undefined;
  lastObservation: PendingObservation | undefined = undefined;
  /** The speech-log position this member has heard up to. */
  heardUpTo = 0;
  /** The tokens its turns spent; made at the first turn that spent any (a crowd's brains spend none). */
  tokens: Usage | undefined = undefined;
  /** What the turn in flight perceives as heard and seen. */
  turnHeard: readonly Heard[] = NO_SPEECH;
  turnEvents: readonly Envelope[] = NO_EVENTS;
  /** Where the turn in flight is counted, and what frees its slot: kept here, not in a closure per turn. */
  turnOutcomes: Partial<Record<RunReason, number>> | undefined = undefined;
  turnDone: (() => void) | undefined = undefined;
  private events: Envelope[] | undefined = undefined;

  constructor(init: {
    name: string;
    runtime: AgentRuntime;
    triggers: MemberTriggers;
    thinkEvery: number;
    rounds: number;
    budget: Budget | undefined;
    scripted: boolean;
    onSceneModel: boolean;
    privateState: Record<string, JsonValue>;
  }) {
    this.name = init.name;
    this.runtime = init.runtime;
    this.triggers = init.triggers;
    this.thinkEvery = init.thinkEvery;
    this.rounds = init.rounds;
    this.budget = init.budget;
    this.scripted = init.scripted;
    this.onSceneModel = init.onSceneModel;
    this.privateState = init.privateState;
  }

  get agent(): AgentRuntime {
    return this.runtime;
  }

  get private(): Readonly<Record<string, JsonValue>> {
    return this.privateState;
  }

  get spent(): SceneAgentUsage {
    return { turns: this.turns, usage: this.tokens === undefined ? { inputTokens: 0, outputTokens: 0, totalTokens: 0 } : { ...this.tokens } };
  }

  /** Adds the tokens of a finished turn. */
  spend(usage: Usage): void {
    if (usage.totalTokens === 0 && usage.inputTokens === 0 && usage.outputTokens === 0 && usage.estimated !== true) return;
    addUsage((this.tokens ??= { inputTokens: 0, outputTokens: 0, totalTokens: 0 }), usage);
  }

  /** What the scene keeps of this member between turns, as plain data. */
  snapshot(): MemberSnapshot {
    const snapshot: MemberSnapshot = {
      name: this.name,
      private: this.privateState,
      lastThinkTick: Number.isFinite(this.lastThinkTick) ? this.lastThinkTick : null,
      turns: this.turns,
      retired: this.retired,
      heardUpTo: this.heardUpTo,
    };
    if (this.pending !== undefined) snapshot.pending = this.pending;
    if (this.trigger !== undefined) snapshot.trigger = this.trigger;
    if (this.lastReason !== undefined) snapshot.lastReason = this.lastReason;
    if (this.lastObservation !== undefined) snapshot.lastObservation = this.lastObservation;
    if (this.events !== undefined) snapshot.events = [...this.events];
    if (this.tokens !== undefined) snapshot.tokens = { ...this.tokens };
    return snapshot;
  }

  /** Takes up a snapshot of this member (its agent is restored apart). */
  restore(snapshot: MemberSnapshot): void {
    this.privateState = Object.freeze({ ...snapshot.private });
    this.pending = snapshot.pending;
    this.trigger = snapshot.trigger;
    this.lastThinkTick = snapshot.lastThinkTick ?? Number.NEGATIVE_INFINITY;
    this.turns = snapshot.turns;
    this.retired = snapshot.retired;
    this.lastReason = snapshot.lastReason;
    this.lastObservation = snapshot.lastObservation;
    this.heardUpTo = snapshot.heardUpTo;
    this.events = snapshot.events === undefined ? undefined : [...snapshot.events];
    this.tokens = snapshot.tokens === undefined ? undefined : { ...snapshot.tokens };
  }

  /** Records a trigger; the one closest to the start of a reply chain wins. */
  wake(trigger: PendingTrigger): void {
    if (this.pending === undefined || trigger.depth < this.pending.depth) this.pending = trigger;
  }

  /** Keeps a subscribed event for the next turn's perception. */
  see(event: Envelope): void {
    const events = (this.events ??= []);
    if (events.length >= MAX_EVENTS) events.shift();
    events.push(event);
  }

  /** Moves what was heard and seen since the last turn into the turn about to start. */
  beginTurn(trigger: PendingTrigger, heard: readonly Heard[], tick: number): void {
    this.trigger = trigger;
    this.pending = undefined;
    this.turnHeard = heard;
    this.turnEvents = this.events ?? NO_EVENTS;
    this.events = undefined;
    this.lastThinkTick = tick;
    this.turns++;
    this.busy = true;
  }

  /** What the agent perceives at a deliberation of its current turn. */
  perceive(request: Pick<ModelRequest, 'round'>, tick: number, world: WorldReader): Perception {
    const trigger = this.trigger!;
    return {
      agent: this.name,
      tick,
      round: request.round,
      trigger: trigger.detail === undefined ? { reason: trigger.reason } : { reason: trigger.reason, detail: trigger.detail },
      heard: this.turnHeard,
      events: this.turnEvents,
      // Within a turn, the round before; at its start, the last turn's last round.
      observation: request.round > 1 ? this.runtime.current?.observation : this.lastObservation,
      private: this.privateState,
      world,
      random: () => this.random(),
    };
  }

  /** The member's seeded generator (its agent's, made on first use: most crowd members never draw). */
  random(): number {
    return this.runtime.random();
  }
}
