import type { Logger } from 'pino';
import type { Agent, PendingObservation } from '../agent/agent-options.js';
import type { MemoryOptions } from '../agent/memory/agent-memory.js';
import type { AgentEngine, AgentOptions } from '../agent/agent-options.js';
import type { Budget, BudgetLimits, BudgetUsage } from '../agent/budget.js';
import type { Bus } from '../bus/bus.js';
import type { IdSource } from '../bus/ids.js';
import type { Envelope, Pattern, RunReason, TriggerReason } from '../bus/events.js';
import type { ScriptedReply } from '../llm/scripted-provider.js';
import type { Provider, Usage } from '../llm/types.js';
import type { SessionLog } from '../record/session-log.js';
import type { BudgetSnapshot } from '../agent/budget.js';
import type { PriceTable } from '../llm/prices.js';
import type { Tool } from '../tools/types.js';
import type { JsonValue, WorldPath, WorldReader, WorldState } from './world-types.js';

/**
 * How a scene's time passes. `stepped`: one tick per `scene.step()`, envelope `at` is simulated
 * time (`tick × tickMs`), so runs are reproducible. `real`: a tick every `tickMs` of wall time.
 * `accelerated`: a tick every `tickMs / speed` of wall time, simulated time running `speed`× faster.
 */
export type ClockOptions =
  | { mode: 'stepped'; tickMs?: number }
  | { mode: 'real'; tickMs?: number }
  | { mode: 'accelerated'; tickMs?: number; speed: number };

/**
 * Who deliberates when. `trigger`: an agent whose trigger fired since the last tick. `round-robin`:
 * one agent per tick, in cast order. `every-tick`: every agent, every tick. Per-agent `thinkEvery`
 * applies under all three.
 */
export type SchedulePolicy = 'trigger' | 'round-robin' | 'every-tick';

/** What wakes an agent under the `trigger` policy (timers and `start` also under the others). */
export type TriggerSpec =
  /** The scene's first tick. */
  | 'start'
  /** Speech (`agent.said`) by another agent of the scene. */
  | 'speech'
  /** Speech addressed to this agent (`say` with `to`), and `scene.message` to it. */
  | 'addressed'
  /** Any bus event matching the pattern (and the predicate), from anyone but this agent. */
  | { on: Pattern; where?: (event: Envelope) => boolean }
  /** Every `every` ticks, starting at tick `offset` (default `every`). */
  | { every: number; offset?: number };

/** What a scripted brain (or the perception text of a model) is told at each deliberation. */
export type Perception = {
  agent: string;
  tick: number;
  /** 1-based deliberation within this turn. */
  round: number;
  /** What started this turn. */
  trigger: { reason: TriggerReason; detail?: string };
  /** Speech heard since the agent's last turn, oldest first (at most `hearing` items). */
  heard: readonly Heard[];
  /** Subscribed events seen since the last turn, oldest first. */
  events: readonly Envelope[];
  /** The outcome of the agent's previous round (this turn's, or its last turn's last round). */
  observation: PendingObservation | undefined;
  /** The agent's private state (read-only view; change it through `update_private`). */
  private: Readonly<Record<string, JsonValue>>;
  world: WorldReader;
  /** A seeded generator for this agent: the same seed gives the same numbers. In [0, 1). */
  random(): number;
};

/** One utterance as a listener hears it. */
export type Heard = { from: string; text: string; to?: string; tick: number };

/**
 * A rule-driven brain: from what the agent perceived, the turn it writes — `<ACTION>` text exactly
 * as a model would write it, or a scripted turn with native calls. It runs in place of a model
 * call, through the same parse → validate → dispatch → observe cycle. `null` (or `undefined`)
 * passes: the turn ends quietly, with no speech and no correction.
 */
export type Brain = (perception: Perception) => ScriptedReply | null | undefined | Promise<ScriptedReply | null | undefined>;

/** One member of the cast, as `scene.add` takes it. */
export type CastMember = {
  name: string;
  instructions?: string;
  /** The agent's own tools; the scene's built-in and shared tools are added. */
  tools?: readonly Tool[];
  /** A model… */
  provider?: Provider;
  /** …or a scripted brain (exactly one of the two). */
  brain?: Brain;
  protocol?: 'xml' | 'native';
  /** Private state at the start. */
  private?: Record<string, JsonValue>;
  /** What wakes the agent (default: `['start', 'addressed']`). */
  triggers?: readonly TriggerSpec[];
  /** Think at most once every N ticks (default 1). */
  thinkEvery?: number;
  /** Deliberations per turn before the agent yields (default 1). */
  rounds?: number;
  budget?: BudgetLimits;
  maxCorrections?: number;
  maxObservationChars?: number;
  /** Keep the agent's conversation across its turns (see `createAgent`'s `memory`, docs/memory.md). */
  memory?: MemoryOptions | boolean;
  /** Rewrites what each model call is sent (see `createAgent`'s `onBeforeModel`, docs/hooks.md). */
  onBeforeModel?: AgentOptions['onBeforeModel'];
  /** Fixes a rejected call once per turn (see `createAgent`'s `repair`, docs/hooks.md). */
  repair?: AgentOptions['repair'];
  /** What steps this agent's statechart (see `createAgent`'s `engine`; default: the scene's). */
  engine?: AgentEngine;
};

/** How a scene is built: `createScene(options)`. */
export type SceneOptions = {
  /** Names the scene on every event (`envelope.scene`). */
  name: string;
  /** The world document at the start (plain JSON). */
  world?: Record<string, JsonValue>;
  clock?: ClockOptions;
  schedule?: SchedulePolicy;
  /** Seeds every agent's `random()` (default: a random seed, reported in `scene.started`). */
  seed?: number;
  /** Tools given to every agent, besides the built-ins. */
  tools?: readonly Tool[];
  /**
   * A real model for the cast: every member with `instructions` and a scripted `brain` deliberates
   * on it instead (its instructions are the persona); members without instructions stay scripted.
   * This is how `troupe run <scene> --model openai:gpt-4o-mini` swaps the NPCs' brains for a model.
   */
  model?: SceneModel;
  /** Leave out built-in tools by name (e.g. `['publish_event']`). */
  withoutTools?: readonly string[];
  /** The scene-wide keyed limiter: concurrent model calls, tool executions and turns. */
  concurrency?: ConcurrencyOptions;
  /** Caps shared by the whole scene; exhausting one stops the scene with reason `budget`. */
  budget?: BudgetLimits;
  /** Prices by model, USD per million tokens, over troupe's defaults: for `costUsd` in usage and budgets (docs/budgets.md). */
  prices?: PriceTable;
  /** Speech items an agent remembers between turns (default 20). */
  hearing?: number;
  /** Replies in a chain of speech before it stops triggering (turn-taking; default 6). */
  maxReplyChain?: number;
  /** Time `stop()` waits for runs in flight to settle after aborting them (default 5 s). */
  stopTimeoutMs?: number;
  /**
   * Longest stretch of wall time, in ms, a scene runs turns before it lets the event loop in
   * (default 20): scripted turns finish at once, and without a pause a long tick would hold off
   * Ctrl-C, timers and sockets until it ends. `0` pauses between every two turns; `Infinity` never
   * (a benchmark's baseline).
   */
  yieldEveryMs?: number;
  bus?: Bus;
  /** The ids of the bus the scene makes for itself (default: counted, `<name>-1`, `<name>-2`, … for a stepped scene). */
  ids?: IdSource;
  /**
   * Called with the scene's bus as soon as it exists, before any event: how a host that lets the
   * scene make its own bus (with a stepped scene's simulated clock) still sees every event.
   */
  observe?: (bus: Bus) => void;
  log?: string | SessionLog;
  logger?: Logger;
  /**
   * What steps the members' statecharts (see `createAgent`'s `engine`; default `'compiled'`):
   * `'xstate'` runs each member in an XState actor of its own. A member may name its own.
   */
  engine?: AgentEngine;
};

/** A model for a scene's cast, and the protocol it speaks (default: each member's, else `xml`). */
export type SceneModel = { provider: Provider; protocol?: 'xml' | 'native' };

/** The scene-wide keyed limiter: how many of each thing may be in flight at once. */
export type ConcurrencyOptions = {
  /** Concurrent model calls per provider name: one number for all, or per name (`'*'` default). */
  modelCalls?: number | Record<string, number>;
  /** Concurrent executions per tool name, across all agents. */
  toolCalls?: Record<string, number>;
  /** Concurrent tool executions in the whole scene (default 64). */
  tools?: number;
  /** Agent turns in flight at once (default 64); the rest of a tick's turns wait. */
  turns?: number;
};

/** An agent of a scene. */
export type SceneAgent = {
  readonly name: string;
  readonly agent: Agent;
  readonly private: Readonly<Record<string, JsonValue>>;
  /** Retired agents get no more turns (their budget is spent, or `scene.retire(name)`). */
  readonly retired: boolean;
  /** Whether it deliberates on the scene's `model` (a member with a brain and instructions, when the scene has one). */
  readonly onSceneModel: boolean;
  readonly turns: number;
  /** How its last turn ended. */
  readonly lastReason: RunReason | undefined;
  /** Its own budget (the scene's is `scene.budget`). */
  readonly budget: Budget | undefined;
  /** What its turns have spent so far. */
  readonly spent: SceneAgentUsage;
};

/** What one agent's turns spent: its turns, and the tokens of their model calls (marked `estimated` as a run's are). */
export type SceneAgentUsage = { turns: number; usage: Usage };

/** Why a scene stopped. */
export type SceneStopReason = 'ticks' | 'quiet' | 'stopped' | 'budget' | 'signal';

/** What `scene.run` and `scene.stop` resolve with. */
export type SceneResult = {
  reason: SceneStopReason;
  /** More on why, e.g. which budget. */
  detail?: string;
  tick: number;
  turns: number;
  /** Turns that ended `error`. */
  failures: number;
  /** What the scene spent (model calls, tokens, tool calls, wall time), with or without a budget. */
  usage: BudgetUsage;
  /** Wall time from `start` to `scene.stopped`, in ms. */
  wallMs: number;
  /**
   * What each agent spent, by name (every agent of the scene, retired ones too). Always set by a
   * scene; optional only so that results written by hand (a `summarize` test) need not list it.
   */
  agents?: Record<string, SceneAgentUsage>;
};

/** What one `scene.step()` did: how many turns ran, and how they ended. */
export type TickReport = { tick: number; turns: number; outcomes: Partial<Record<RunReason, number>> };

/** A live scene (`createScene`). */
export type Scene = {
  readonly name: string;
  readonly bus: Bus;
  readonly tick: number;
  readonly seed: number;
  readonly world: WorldState;
  readonly agents: ReadonlyMap<string, SceneAgent>;
  /** The scene's own budget, when it has one. */
  readonly budget: Budget | undefined;
  readonly started: boolean;
  readonly stopped: boolean;
  /** Adds an agent (before or during the run). */
  add(member: CastMember): SceneAgent;
  /** Publishes `scene.started`; in `real` and `accelerated` mode, starts ticking. */
  start(): Promise<void>;
  /** One tick: due agents take their turns; resolves once they have all settled. */
  step(): Promise<TickReport>;
  /** How its time passes (`clock.mode`): only a `stepped` scene can be paused between ticks. */
  readonly clockMode: ClockOptions['mode'];
  /**
   * Starts if needed, then ticks until `ticks`, quiet, a budget, `stop()` or `signal`. A stepped
   * run awaits `beforeTick(next tick)` before each tick when it returns a promise: how a host
   * pauses and single-steps the scene (the inspector's tick gate). `stop()` ends the wait.
   */
  run(options?: { ticks?: number; signal?: AbortSignal; beforeTick?: (tick: number) => Promise<void> | undefined }): Promise<SceneResult>;
  /** Aborts every run in flight, waits for them (bounded), publishes `scene.stopped`. Idempotent. */
  stop(reason?: string): Promise<SceneResult>;
  /** Publishes `scene.event` as the scene (wakes agents subscribed to it). */
  emit(name: string, payload?: JsonValue): void;
  /** Speech from outside the cast (a player, a narrator): heard like any agent's. */
  say(from: string, text: string, to?: string): void;
  /**
   * Takes an agent out of the scene: no more turns, triggers or speech wakes it (it still hears, and
   * a turn in flight finishes). A tool can retire its caller: `scene.retire(context.agent)`.
   * Returns false for an unknown or already retired agent.
   */
  retire(name: string): boolean;
  /** A path of the world, for hosts: `scene.world.get('tavern.door')`. */
  read(path: WorldPath): JsonValue | undefined;
  /**
   * The scene between ticks as plain data (counters, world, speech, budgets, each member and its
   * agent): what a checkpoint holds. Throws `SceneError` while a turn runs.
   */
  snapshot(): SceneSnapshot;
  /**
   * Takes up a snapshot in a scene built the same way (same name and cast) that has not started:
   * the run goes on from the snapshot's tick. Throws `SceneError` for a snapshot that does not fit.
   */
  restore(snapshot: SceneSnapshot): void;
};

/** The scene's recent speech as plain data, for its snapshot: the entries held and the count so far. */
export type SpeechSnapshot = { seq: number; entries: (Heard & { seq: number })[] };

/**
 * A scene between ticks as plain data: what a checkpoint holds and a resume starts from. JSON-safe
 * (image bytes and rich results in members' last observations are tagged objects).
 */
export type SceneSnapshot = {
  v: 1;
  kind: 'troupe.scene';
  scene: string;
  seed: number;
  tick: number;
  rotation: number;
  turns: number;
  failures: number;
  started: boolean;
  world: JsonValue;
  speech: SpeechSnapshot;
  budget?: BudgetSnapshot;
  /** Each member as the scene keeps it, with its agent's snapshot, in cast order. */
  members: unknown[];
};
