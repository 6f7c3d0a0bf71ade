import type { LimitFunction } from 'p-limit';
import type { AgentEngine } from '../agent/agent-options.js';
import { Budget } from '../agent/budget.js';
import type { PriceTable } from '../llm/prices.js';
import { makeAgent } from '../agent/create-agent.js';
import type { Bus } from '../bus/bus.js';
import { ConfigError } from '../errors.js';
import type { Provider } from '../llm/types.js';
import type { ReplayHooks, SessionLog } from '../record/session-log.js';
import { writeAheadCheck } from '../record/write-ahead-check.js';
import type { SceneHooks } from './scene-hooks.js';
import type { ToolLimiters } from '../tools/acquire-slot.js';
import type { DispatchOptions } from '../tools/dispatch-options.js';
import type { Tool } from '../tools/types.js';
import type { Logger } from 'pino';
import { brainProvider } from './brain-provider.js';
import { frozenJson } from './json-value.js';
import { limitedProvider } from './limited-provider.js';
import { SceneMember, type MemberTriggers } from './scene-member.js';
import type { Brain, CastMember, Perception, SceneModel, TriggerSpec } from './types.js';
import type { JsonValue } from './world-types.js';
import type { ModelRequest } from '../llm/types.js';

/** What a scene shares with every agent it builds. */
export type CastContext = {
  scene: string;
  bus: Bus;
  seed: number;
  /** Built-in and scene-wide tools, given to every agent before its own. */
  sharedTools: readonly Tool[];
  toolLimiter: LimitFunction;
  toolLimiters: ToolLimiters;
  /** Concurrent model calls allowed for a provider name. */
  modelLimit(provider: string): number;
  /** Makes the limiter of a scene-wide limit (see `SceneHooks.limit`). */
  limiter(key: string, concurrency: number): LimitFunction;
  sceneBudget: Budget | undefined;
  /** The scene's price table (its `prices` over the defaults). */
  prices: PriceTable;
  log: SessionLog | undefined;
  logger: Logger | undefined;
  perceive(agent: string, request: ModelRequest): Perception;
  model: SceneModel | undefined;
  /** A log being resumed: providers answer from it, and calls it recorded are not run again. */
  replay: ReplayHooks | undefined;
  /** What steps the members' statecharts, unless a member names its own. */
  engine: AgentEngine | undefined;
  /** A host running the scene across processes: its journal, write-ahead check and provider wrapper. */
  hooks: SceneHooks | undefined;
};

const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * Builds the agents of one scene. Agents built from the same tool list share one combined list
 * (so one registry, manifest and AJV set); agents with the same brain share one provider; agents
 * of the same provider share one model limiter.
 */
export class Cast {
  private readonly context: CastContext;
  private readonly toolLists = new WeakMap<readonly Tool[], readonly Tool[]>();
  /** Each tool the cast has met, numbered; and the combined list of each sequence of them. */
  private readonly toolIds = new Map<Tool, number>();
  private readonly sameTools = new Map<string, readonly Tool[]>();
  private readonly brains = new WeakMap<Brain, Provider>();
  private readonly providers = new WeakMap<Provider, Provider>();
  private readonly modelLimiters = new Map<string, LimitFunction>();
  private readonly sceneBudgets: readonly Budget[];

  private readonly writeAhead: SessionLog | undefined;
  private readonly journal: DispatchOptions['journal'];

  constructor(context: CastContext) {
    this.context = context;
    this.sceneBudgets = Object.freeze(context.sceneBudget === undefined ? [] : [context.sceneBudget]);
    const { hooks } = context;
    // One check for the whole cast, as a scene's log is one.
    this.writeAhead = context.log ?? (hooks?.writeAhead === undefined ? undefined : writeAheadCheck(hooks.writeAhead, '(the scene’s Redis journal)'));
    this.journal = context.replay?.journal ?? hooks?.journal;
  }

  build(member: CastMember, taken: (name: string) => boolean): SceneMember {
    const { context } = this;
    if (member === null || typeof member !== 'object') throw new ConfigError(`scene "${context.scene}": add(member) takes an object`);
    const { name } = member;
    if (typeof name !== 'string' || !AGENT_NAME.test(name)) {
      throw new ConfigError(`scene "${context.scene}": agent name ${JSON.stringify(name)} must be 1–64 letters, digits, "_", "." or "-"`);
    }
    if (taken(name)) throw new ConfigError(`scene "${context.scene}": there is already an agent named "${name}"`);
    if ((member.provider === undefined) === (member.brain === undefined)) {
      throw new ConfigError(`scene "${context.scene}": agent "${name}" needs exactly one of \`provider\` (a model) or \`brain\` (a scripted function)`);
    }
    if (member.brain !== undefined && typeof member.brain !== 'function') {
      throw new ConfigError(`scene "${context.scene}": agent "${name}": brain must be a function of its perception`);
    }
    const thinkEvery = positive(member.thinkEvery ?? 1, 'thinkEvery', name, context.scene);
    const rounds = positive(member.rounds ?? 1, 'rounds', name, context.scene);
    const budget = member.budget === undefined ? undefined : new Budget(name, member.budget);
    // With a scene model, a member with a persona speaks through the model instead of its script.
    const model = member.brain !== undefined && member.instructions !== undefined ? context.model : undefined;
    const scripted = member.brain !== undefined && model === undefined;
    const protocol = member.protocol ?? model?.protocol;
    // Members without a budget of their own share one list: a crowd holds a hundred thousand of them.
    const budgets = budget === undefined ? this.sceneBudgets : [budget, ...this.sceneBudgets];
    const seed = mix(context.seed, name);
    const engine = member.engine ?? context.engine;
    const runtime = makeAgent(
      {
        name,
        ...(member.instructions !== undefined && { instructions: member.instructions }),
        tools: this.toolsFor(member.tools),
        provider: scripted ? this.brainFor(member.brain!) : this.providerFor(model?.provider ?? member.provider!),
        ...(protocol !== undefined && { protocol }),
        bus: context.bus,
        scene: context.scene,
        limiter: context.toolLimiter,
        ...(member.maxCorrections !== undefined && { maxCorrections: member.maxCorrections }),
        ...(member.maxObservationChars !== undefined && { maxObservationChars: member.maxObservationChars }),
        ...(member.memory !== undefined && { memory: member.memory }),
        ...(member.onBeforeModel !== undefined && { onBeforeModel: member.onBeforeModel }),
        ...(member.repair !== undefined && { repair: member.repair }),
        ...(context.logger !== undefined && { logger: context.logger }),
        ...(engine !== undefined && { engine }),
        seed,
      },
      // Scene-wide, not per agent: per-tool limits, the write-ahead log, the scene's budget.
      {
        toolLimiters: context.toolLimiters,
        budgets,
        prices: context.prices,
        ...(this.writeAhead !== undefined && { log: this.writeAhead }),
        ...(this.journal !== undefined && { journal: this.journal }),
      },
    );
    return new SceneMember({
      name,
      runtime,
      triggers: parseTriggers(member.triggers ?? DEFAULT_TRIGGERS, name, context.scene),
      thinkEvery,
      rounds,
      budget,
      scripted,
      onSceneModel: model !== undefined,
      privateState: Object.freeze({ ...(frozenJson(member.private ?? {}, `private state of "${name}"`) as Record<string, JsonValue>) }),
    });
  }

  /**
   * The member's tools after the scene's, one list for every member that names the same tools:
   * `tools: [act]` written per member is a new array each time, and the agent's manifest and
   * system prompt are kept per list, so a cast of a hundred thousand would render them that often.
   */
  private toolsFor(own: readonly Tool[] | undefined): readonly Tool[] {
    const { sharedTools } = this.context;
    if (own === undefined || own.length === 0) return sharedTools;
    let combined = this.toolLists.get(own);
    if (combined === undefined) {
      let key = '';
      for (const tool of own) {
        let id = this.toolIds.get(tool);
        if (id === undefined) this.toolIds.set(tool, (id = this.toolIds.size));
        key += `${id},`;
      }
      combined = this.sameTools.get(key);
      if (combined === undefined) this.sameTools.set(key, (combined = [...sharedTools, ...own]));
      this.toolLists.set(own, combined);
    }
    return combined;
  }

  private brainFor(brain: Brain): Provider {
    let provider = this.brains.get(brain);
    if (provider === undefined) {
      provider = brainProvider(brain, (request) => this.context.perceive(request.agent, request));
      if (this.context.replay !== undefined) provider = this.context.replay.provider(provider);
      if (this.context.hooks?.provider !== undefined) provider = this.context.hooks.provider(provider);
      this.brains.set(brain, provider);
    }
    return provider;
  }

  private providerFor(provider: Provider): Provider {
    let limited = this.providers.get(provider);
    if (limited === undefined) {
      let limiter = this.modelLimiters.get(provider.name);
      if (limiter === undefined) {
        limiter = this.context.limiter(`model:${provider.name}`, this.context.modelLimit(provider.name));
        this.modelLimiters.set(provider.name, limiter);
      }
      const wrapped = this.context.hooks?.provider?.(provider) ?? provider;
      limited = limitedProvider(this.context.replay === undefined ? wrapped : this.context.replay.provider(wrapped), limiter);
      this.providers.set(provider, limited);
    }
    return limited;
  }
}

const DEFAULT_TRIGGERS: readonly TriggerSpec[] = ['start', 'addressed'];

function parseTriggers(specs: readonly TriggerSpec[], agent: string, scene: string): MemberTriggers {
  const where = `scene "${scene}": agent "${agent}"`;
  if (!Array.isArray(specs)) throw new ConfigError(`${where}: triggers must be an array`);
  let start = false;
  let speech = false;
  let addressed = false;
  const timers: { every: number; offset: number }[] = [];
  const on: MemberTriggers['on'][number][] = [];
  for (const spec of specs as readonly unknown[]) {
    if (spec === 'start') start = true;
    else if (spec === 'speech') speech = true;
    else if (spec === 'addressed') addressed = true;
    else if (isObject(spec) && 'every' in spec) {
      const every = positive(spec.every, 'trigger every', agent, scene);
      timers.push({ every, offset: spec.offset === undefined ? every : nonNegativeInteger(spec.offset, agent, scene) });
    } else if (isObject(spec) && typeof spec.on === 'string') {
      if (spec.where !== undefined && typeof spec.where !== 'function') throw new ConfigError(`${where}: trigger \`where\` must be a function`);
      on.push(spec as MemberTriggers['on'][number]);
    } else {
      throw new ConfigError(`${where}: unknown trigger ${JSON.stringify(spec)} (use 'start', 'speech', 'addressed', { on: pattern } or { every: ticks })`);
    }
  }
  return { start, speech, addressed, timers, on };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function positive(value: unknown, option: string, agent: string, scene: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError(`scene "${scene}": agent "${agent}": ${option} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

function nonNegativeInteger(value: unknown, agent: string, scene: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ConfigError(`scene "${scene}": agent "${agent}": trigger offset must be an integer ≥ 0, got ${String(value)}`);
  }
  return value;
}

/**
 * A per-agent seed from the scene's seed and the agent's name, so adding an agent changes no other
 * agent's numbers. FNV-1a over the name, then MurmurHash3's finalizer: names that differ in one
 * character (guest-1, guest-2) must give unrelated seeds, since the generator's first outputs
 * follow its seed closely.
 */
function mix(seed: number, name: string): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let index = 0; index < name.length; index++) hash = Math.imul(hash ^ name.charCodeAt(index), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) | 0;
}
