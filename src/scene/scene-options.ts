import pLimit, { type LimitFunction } from 'p-limit';
import { ConfigError } from '../errors.js';
import { createToolLimiters, type ToolLimiters } from '../tools/acquire-slot.js';
import { DEFAULT_YIELD_EVERY_MS } from './pacer.js';
import { resolveClock, type SceneClock } from './scene-clock.js';
import { BUILT_IN_TOOLS } from './scene-tools.js';
import type { SchedulePolicy, SceneOptions } from './types.js';
import { checkEngine } from '../agent/resolve-config.js';
import type { SceneHooks } from './scene-hooks.js';

/** `SceneOptions` checked, with every default filled in. */
export type ResolvedScene = {
  name: string;
  schedule: SchedulePolicy;
  clock: SceneClock;
  seed: number;
  hearing: number;
  turnWindow: number;
  /** Slots for turns that every process of a run shares (`concurrency.turns` on workers). */
  turnLimiter: LimitFunction | undefined;
  maxReplyChain: number;
  stopTimeoutMs: number;
  /** Wall ms of turns between two pauses for the event loop (see `yieldEveryMs`). */
  yieldEveryMs: number;
  /** Built-in tools the scene leaves out. */
  omitted: ReadonlySet<string>;
  toolLimiter: LimitFunction;
  toolLimiters: ToolLimiters;
  modelLimit(provider: string): number;
  /** A limiter of `concurrency` slots for `key` (see `SceneHooks.limit`): shared across processes when the host shares them. */
  limiter(key: string, concurrency: number): LimitFunction;
};

const SCHEDULES: readonly SchedulePolicy[] = ['trigger', 'round-robin', 'every-tick'];

/** Checks the options of `createScene`; throws a ConfigError naming the first one that cannot work. */
export function resolveSceneOptions(options: SceneOptions, hooks?: SceneHooks): ResolvedScene {
  if (options === null || typeof options !== 'object') throw new ConfigError('createScene(options) takes an object');
  const { name } = options;
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw new ConfigError(`createScene: name ${JSON.stringify(name)} must be 1–64 letters, digits, "_", "." or "-"`);
  }
  const positive = (value: unknown, option: string): number => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new ConfigError(`createScene "${name}": ${option} must be a positive integer, got ${String(value)}`);
    }
    return value;
  };
  const schedule = options.schedule ?? 'trigger';
  if (!SCHEDULES.includes(schedule)) {
    throw new ConfigError(`createScene "${name}": schedule must be 'trigger', 'round-robin' or 'every-tick', got ${JSON.stringify(schedule)}`);
  }
  if (options.seed !== undefined && !Number.isSafeInteger(options.seed)) {
    throw new ConfigError(`createScene "${name}": seed must be an integer, got ${String(options.seed)}`);
  }
  const yieldEveryMs = options.yieldEveryMs ?? DEFAULT_YIELD_EVERY_MS;
  if (typeof yieldEveryMs !== 'number' || Number.isNaN(yieldEveryMs) || yieldEveryMs < 0) {
    throw new ConfigError(`createScene "${name}": yieldEveryMs must be a number ≥ 0 (Infinity: never pause), got ${String(yieldEveryMs)}`);
  }
  checkEngine(options.engine, `createScene "${name}"`);
  const omitted = new Set(options.withoutTools ?? []);
  for (const tool of omitted) {
    if (!(BUILT_IN_TOOLS as readonly string[]).includes(tool)) {
      throw new ConfigError(`createScene "${name}": withoutTools names "${tool}", not a built-in tool (${BUILT_IN_TOOLS.join(', ')})`);
    }
  }
  const limiter = (key: string, concurrency: number): LimitFunction => hooks?.limit?.(key, concurrency) ?? pLimit({ concurrency, rejectOnClear: true });
  const toolLimiters = createToolLimiters(hooks?.limit === undefined ? undefined : (tool, concurrency) => limiter(`tool:${tool}`, concurrency));
  for (const [tool, limit] of Object.entries(options.concurrency?.toolCalls ?? {})) {
    toolLimiters.set(tool, limiter(`tool:${tool}`, positive(limit, `concurrency.toolCalls.${tool}`)));
  }
  const models = options.concurrency?.modelCalls;
  const tools = options.concurrency?.tools;
  const turns = options.concurrency?.turns;
  return {
    name,
    schedule,
    clock: resolveClock(options.clock, name),
    seed: options.seed ?? (Math.random() * 0x7fff_ffff) | 0,
    hearing: positive(options.hearing ?? 20, 'hearing'),
    turnWindow: positive(turns ?? hooks?.turnWindow ?? 64, 'concurrency.turns'),
    // Only a limit the scene sets is shared: the defaults bound what one process runs at once.
    turnLimiter: turns === undefined || hooks?.limit === undefined ? undefined : limiter('turns', turns),
    maxReplyChain: positive(options.maxReplyChain ?? 6, 'maxReplyChain'),
    stopTimeoutMs: positive(options.stopTimeoutMs ?? 5_000, 'stopTimeoutMs'),
    yieldEveryMs,
    omitted,
    toolLimiter: tools === undefined ? pLimit({ concurrency: 64, rejectOnClear: true }) : limiter('tools', positive(tools, 'concurrency.tools')),
    toolLimiters,
    modelLimit: (provider) =>
      positive(typeof models === 'number' ? models : (models?.[provider] ?? models?.['*'] ?? 8), `concurrency.modelCalls for "${provider}"`),
    limiter,
  };
}
