import type { Logger } from 'pino';
import { silentLogger } from '../log/silent-logger.js';
import { Budget } from '../agent/budget.js';
import { priceTable } from '../llm/prices.js';
import type { Bus } from '../bus/bus.js';
import type { RunReason } from '../bus/events.js';
import { ConfigError, SceneError } from '../errors.js';
import { createSessionLog, type SessionLog } from '../record/session-log.js';
import type { ReplayTarget } from '../record/replay-driver.js';
import { Cast } from './cast.js';
import { frozenJson } from './json-value.js';
import { ranTurn, takeTurn, type TurnStage } from './take-turn.js';
import { createPacer, type Pacer } from './pacer.js';
import { runStepped } from './run-stepped.js';
import { inWindow, limitedTask, type SceneClock } from './scene-clock.js';
import { sceneBus } from './scene-bus.js';
import { resolveSceneOptions, type ResolvedScene } from './scene-options.js';
import type { PendingTrigger, SceneMember } from './scene-member.js';
import { sceneTools } from './scene-tools.js';
import { SceneEars } from './scene-ears.js';
import { dueMembers, isQuiet, wakeOnTimers } from './schedule.js';
import { SpeechLog } from './speech-log.js';
import { stopResult } from './stop-result.js';
import { TickGates } from './tick-gates.js';
import type { CastMember, Scene, SceneAgent, SceneOptions, SceneResult, SceneStopReason, TickReport } from './types.js';
import { createWorld } from './world-state.js';
import { sceneHooks } from './scene-hooks.js';
import type { PartedScene } from './parted-scene.js';
import { restoreScene, sceneReplayTarget, sceneSnapshot, type SceneSnapshot } from './scene-snapshot.js';
import type { JsonValue, WorldPath, WorldState } from './world-types.js';

/** A scene made by `createScene`, as the workers drive it. */
export function partedSceneOf(scene: Scene): PartedScene {
  if (!(scene instanceof SceneRuntime)) throw new ConfigError('a scene run by workers must be made by createScene');
  return scene;
}

/** The replay target of a scene made by `createScene` (what `resumeScene` and `replayLog` drive). */
export function replayTargetOf(scene: Scene): ReplayTarget {
  if (!(scene instanceof SceneRuntime)) throw new ConfigError('resume and replay take a scene made by createScene');
  return scene.replayTarget();
}

/**
 * Creates a scene: a world, a cast of agents (model-driven, brain-driven or mixed), a clock and a
 * scheduling policy, all on one bus. See docs/scenes.md.
 *
 * @example
 * const scene = createScene({ name: 'tavern', world: { ale: 10 }, seed: 7 });
 * scene.add({ name: 'innkeeper', brain: innkeeper, triggers: ['start', 'speech'] });
 * const result = await scene.run({ ticks: 20 });
 */
export function createScene(options: SceneOptions): Scene {
  return new SceneRuntime(options);
}

class SceneRuntime implements Scene {
  readonly name: string;
  readonly bus: Bus;
  readonly seed: number;
  readonly world: WorldState;
  readonly budget: Budget | undefined;
  /** What the scene spends, counted whether or not it has a budget: its own budget, else one without limits. */
  readonly meter: Budget;
  readonly members = new Map<string, SceneMember>();
  /** Cast order: turns of one tick start in this order. */
  readonly order: SceneMember[] = [];
  private readonly clock: SceneClock;
  private readonly cast: Cast;
  readonly speech: SpeechLog;
  private readonly options: ResolvedScene;
  readonly logger: Logger;
  private readonly log: SessionLog | undefined;
  private readonly ownsLog: boolean;
  private readonly ears: SceneEars;
  private readonly pacer: Pacer;
  private readonly inFlight = new Set<Promise<unknown>>();
  tickCount = 0;
  rotation = 0;
  turnCount = 0;
  failures = 0;
  readonly ranTurn: TurnStage['ranTurn'] = (result, agent) => ranTurn(this, this.members.get(agent)!, result);
  hasStarted = false;
  /** `performance.now()` at start, for the result's wall time. */
  startedAt: number | undefined;
  private stopping: Promise<SceneResult> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private wallTimer: ReturnType<typeof setTimeout> | undefined;
  private resolveStopped!: (result: SceneResult) => void;
  /** Settles with the scene's result however it stops: what a timed run waits for. */
  private readonly whenStopped = new Promise<SceneResult>((resolve) => (this.resolveStopped = resolve));
  /** Runs waiting on a host's tick gate, let go when the scene has stopped. */
  private readonly gates = new TickGates();

  constructor(options: SceneOptions) {
    const hooks = sceneHooks();
    const resolved = resolveSceneOptions(options, hooks);
    const { name } = resolved;
    this.options = resolved;
    this.pacer = createPacer(resolved.yieldEveryMs);
    this.name = name;
    this.clock = resolved.clock;
    this.seed = resolved.seed;
    const replay = typeof options.log === 'object' ? options.log.replay : undefined;
    const busOptions = hooks?.ids === undefined || options.ids !== undefined ? options : { ...options, ids: hooks.ids };
    this.bus = sceneBus(name, busOptions, this.clock, () => this.tickCount * this.clock.tickMs, replay);
    hooks?.observe?.(this.bus);
    options.observe?.(this.bus);
    this.logger = options.logger ?? silentLogger;
    this.ownsLog = typeof options.log === 'string';
    this.log = typeof options.log === 'string' ? createSessionLog(options.log) : options.log;
    this.log?.attach(this.bus);
    this.budget = options.budget === undefined ? undefined : (hooks?.budget ?? ((budget, limits) => new Budget(budget, limits)))(name, options.budget);
    this.meter = this.budget ?? new Budget(name, {});
    this.world = (hooks?.world ?? createWorld)(options.world ?? {}, (path, value, writer) => {
      this.bus.publish('world.changed', { path, value, tick: this.tickCount }, { scene: name, agent: writer?.agent, cause: writer?.cause });
    });
    this.speech = new SpeechLog(Math.max(64, resolved.hearing * 4));
    const builtIns = sceneTools({
      name,
      bus: this.bus,
      world: this.world,
      member: (agent) => this.members.get(agent),
      memberNames: () => this.order.map((member) => member.name),
      setPrivate: (member, key, value, cause) => this.setPrivate(member, key, value, cause),
    }).filter((tool) => !resolved.omitted.has(tool.name));
    this.cast = new Cast({
      scene: name,
      bus: this.bus,
      seed: this.seed,
      sharedTools: [...builtIns, ...(options.tools ?? [])],
      toolLimiter: resolved.toolLimiter,
      toolLimiters: resolved.toolLimiters,
      modelLimit: resolved.modelLimit,
      limiter: resolved.limiter,
      sceneBudget: this.meter,
      prices: priceTable(options.prices, `createScene "${name}"`),
      log: this.log,
      logger: options.logger,
      perceive: (agent, request) => this.members.get(agent)!.perceive(request, this.tickCount, this.world),
      model: options.model,
      replay,
      engine: options.engine,
      hooks,
    });
    this.ears = new SceneEars(name, this.bus, () => ({
      members: this.members,
      speech: this.speech,
      tick: this.tickCount,
      maxReplyChain: resolved.maxReplyChain,
      logger: this.logger,
    }));
  }

  get tick(): number {
    return this.tickCount;
  }

  get agents(): ReadonlyMap<string, SceneAgent> {
    return this.members;
  }

  get started(): boolean {
    return this.hasStarted;
  }

  get stopped(): boolean {
    return this.stopping !== undefined;
  }

  add(spec: CastMember): SceneAgent {
    if (this.stopping !== undefined) throw new SceneError(`scene "${this.name}" has stopped; it takes no new agents`);
    const member = this.cast.build(spec, (name) => this.members.has(name));
    this.members.set(member.name, member);
    this.order.push(member);
    this.ears.listenFor(member);
    if (this.hasStarted && member.triggers.start) member.wake({ reason: 'start', depth: 0 });
    return member;
  }

  async start(): Promise<void> {
    if (this.stopping !== undefined) throw new SceneError(`scene "${this.name}" has stopped; create a new scene to run again`);
    if (this.hasStarted) return;
    this.hasStarted = true;
    this.startedAt = performance.now();
    this.bus.publish(
      'scene.started',
      { tick: this.tickCount, seed: this.seed, agents: this.order.map((member) => member.name), world: this.world.snapshot() },
      { scene: this.name },
    );
    for (const member of this.order) if (member.triggers.start) member.wake({ reason: 'start', depth: 0 });
    const wallMs = this.budget?.limits.wallMs;
    if (wallMs !== undefined) {
      this.wallTimer = setTimeout(() => void this.stop('budget', `budget "${this.name}" exhausted: wall time ${wallMs} ms`), wallMs);
      this.wallTimer.unref?.();
    }
  }

  step(): Promise<TickReport> {
    if (this.stopping !== undefined) return Promise.reject(new SceneError(`scene "${this.name}" has stopped; it cannot step`));
    return this.track(this.advance());
  }

  get clockMode(): Scene['clockMode'] {
    return this.clock.mode;
  }

  async run(options: Parameters<Scene['run']>[0] = {}): Promise<SceneResult> {
    if (this.stopping !== undefined) throw new SceneError(`scene "${this.name}" has stopped; create a new scene to run again`);
    const { ticks = Number.POSITIVE_INFINITY } = options;
    if (ticks !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(ticks) || ticks < 1)) {
      throw new ConfigError(`scene "${this.name}": run({ ticks }) must be a positive integer, got ${String(ticks)}`);
    }
    const { signal } = options;
    if (signal?.aborted) return this.stop('signal');
    signal?.addEventListener('abort', () => void this.stop('signal'), { once: true });
    await this.start();
    const until = this.tickCount + ticks;
    if (this.clock.intervalMs === undefined) return runStepped(this, until, options.beforeTick, this.gates, this.pacer);
    return this.runOnTimer(until, this.clock.intervalMs);
  }

  stop(reason: SceneStopReason | string = 'stopped', detail?: string): Promise<SceneResult> {
    if (this.stopping === undefined) {
      this.stopping = this.shutDown(reason, detail);
      this.stopping.then((result) => {
        this.resolveStopped(result);
        this.gates.openAll();
      });
    }
    return this.stopping;
  }

  snapshot(): SceneSnapshot {
    return sceneSnapshot(this);
  }

  restore(snapshot: SceneSnapshot): void {
    restoreScene(this, snapshot);
  }

  /** What a resume needs of the scene to replay its log: its agents, and how to apply recorded changes. */
  replayTarget(): ReplayTarget {
    return sceneReplayTarget(this);
  }

  /** Sets a key of an agent's private state (`null` removes it) and publishes `private.changed`. */
  setPrivate(member: SceneMember, key: string, value: JsonValue, cause?: string): void {
    const next = { ...member.privateState };
    if (value === null) delete next[key];
    else next[key] = frozenJson(value, `private "${key}"`);
    member.privateState = Object.freeze(next);
    this.bus.publish('private.changed', { path: key, value, tick: this.tickCount }, { agent: member.name, scene: this.name, cause });
  }

  emit(name: string, payload?: JsonValue): void {
    if (typeof name !== 'string' || name === '') throw new ConfigError(`scene "${this.name}": emit(name) needs a non-empty name`);
    const data = payload === undefined ? { name } : { name, payload: frozenJson(payload, `payload of "${name}"`) };
    this.bus.publish('scene.event', data, { scene: this.name });
  }

  say(from: string, text: string, to?: string): void {
    if (typeof from !== 'string' || typeof text !== 'string') throw new ConfigError(`scene "${this.name}": say(from, text) takes two strings`);
    this.bus.publish('agent.said', to === undefined ? { text } : { text, to }, { scene: this.name, agent: from });
  }

  read(path: WorldPath): JsonValue | undefined {
    return this.world.get(path);
  }

  retire(name: string): boolean {
    const member = this.members.get(name);
    if (member === undefined || member.retired) return false;
    member.retired = true;
    member.pending = undefined;
    return true;
  }

  /** One tick: timers, then the due agents' turns, at most `concurrency.turns` at a time. */
  private async advance(): Promise<TickReport> {
    if (!this.hasStarted) await this.start();
    const tick = ++this.tickCount;
    this.bus.publish('scene.tick', { tick }, { scene: this.name });
    wakeOnTimers(this.order, tick);
    const picked = dueMembers(this.options.schedule, this.order, tick, this.rotation);
    this.rotation = picked.rotation;
    const report = await this.runDue(picked.due, tick);
    // Between ticks every turn has settled: the moment a checkpoint can hold the whole scene.
    if (this.stopping === undefined) this.log?.checkpoint?.(tick, () => this.snapshot());
    return report;
  }

  /**
   * Tick `tick` for `members` alone (a worker's partitions): their timers, then their due turns.
   * No `scene.tick`: the process that keeps the clock publishes it. Round-robin picks one member
   * of the whole cast, so it has no meaning for a part of it: the workers refuse it.
   */
  async advancePart(tick: number, members: readonly SceneMember[]): Promise<TickReport> {
    if (!this.hasStarted) await this.start();
    this.tickCount = tick;
    wakeOnTimers(members, tick);
    return this.runDue(dueMembers(this.options.schedule, members, tick, 0).due, tick);
  }

  get schedule(): ResolvedScene['schedule'] {
    return this.options.schedule;
  }

  private async runDue(due: readonly SceneMember[], tick: number): Promise<TickReport> {
    const outcomes: Partial<Record<RunReason, number>> = {};
    for (const member of due) member.beginTurn(member.pending ?? TICK, this.heardBy(member), tick);
    const turn = (member: SceneMember, done: () => void): void => this.turn(member, tick, outcomes, done);
    await inWindow(due, this.options.turnWindow, limitedTask(this.options.turnLimiter, turn), this.pacer);
    let turns = 0;
    for (const count of Object.values(outcomes)) turns += count;
    return { tick, turns, outcomes };
  }

  private turn(member: SceneMember, tick: number, outcomes: Partial<Record<RunReason, number>>, done: () => void): void {
    if (this.stopping !== undefined) {
      // Queued behind the window when the scene stopped: the turn never starts.
      member.busy = false;
      return done();
    }
    takeTurn(this, member, tick, outcomes, done);
  }

  /** Counts a turn that ended. */
  turnEnded(ended: RunReason): void {
    this.turnCount++;
    if (ended === 'error') this.failures++;
  }

  private heardBy(member: SceneMember) {
    const heard = this.speech.seq > member.heardUpTo ? this.speech.since(member.heardUpTo, member.name, this.options.hearing) : NO_SPEECH;
    member.heardUpTo = this.speech.seq;
    return heard;
  }

  /** Why the scene ends after the tick just taken, if it does (see `runStepped`). */
  endReason(): { reason: SceneStopReason; detail?: string } | undefined {
    const exhausted = this.budget?.exhausted;
    if (exhausted !== undefined) return { reason: 'budget', detail: exhausted.message };
    if (isQuiet(this.options.schedule, this.order)) return { reason: 'quiet' };
    return undefined;
  }

  private runOnTimer(until: number, intervalMs: number): Promise<SceneResult> {
    this.timer = setInterval(() => {
      if (this.stopping !== undefined) return;
      if (this.tickCount >= until) {
        clearInterval(this.timer);
        void Promise.allSettled([...this.inFlight]).then(() => this.stop('ticks'));
        return;
      }
      void this.step().then(() => {
        const ended = this.endReason();
        if (ended !== undefined && this.stopping === undefined) void this.stop(ended.reason, ended.detail);
      });
    }, intervalMs);
    return this.whenStopped;
  }

  private async shutDown(reason: string, detail: string | undefined): Promise<SceneResult> {
    this.bus.publish('scene.stopping', { tick: this.tickCount, reason }, { scene: this.name });
    clearInterval(this.timer);
    clearTimeout(this.wallTimer);
    for (const member of this.order) if (member.busy) member.runtime.abort(`scene stopped: ${reason}`);
    const timeoutMs = this.options.stopTimeoutMs;
    let timeout: ReturnType<typeof setTimeout> | undefined;
    const settled = await Promise.race([
      Promise.allSettled([...this.inFlight]).then(() => true),
      new Promise<boolean>((resolve) => (timeout = setTimeout(resolve, timeoutMs, false))),
    ]);
    clearTimeout(timeout);
    if (!settled) this.logger.warn({ scene: this.name, timeoutMs }, 'scene stopped with turns still settling');
    this.ears.close();
    const { result, stopped } = stopResult(reason, detail, {
      tick: this.tickCount,
      turns: this.turnCount,
      failures: this.failures,
      usage: this.meter.usage(),
      wallMs: this.startedAt === undefined ? 0 : performance.now() - this.startedAt,
      agents: Object.fromEntries([...this.members.values()].map((member) => [member.name, member.spent])),
    });
    this.bus.publish('scene.stopped', stopped, { scene: this.name });
    if (this.ownsLog) await this.log?.close();
    return result;
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = (): void => void this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }
}

const TICK: PendingTrigger = Object.freeze({ reason: 'tick', depth: 0 });
const NO_SPEECH = Object.freeze([]);
