import { AsyncLocalStorage } from 'node:async_hooks';
import type { LimitFunction } from 'p-limit';
import type { Budget, BudgetLimits } from '../agent/budget.js';
import type { Bus } from '../bus/bus.js';
import type { Envelope } from '../bus/events.js';
import type { IdSource } from '../bus/ids.js';
import type { Provider } from '../llm/types.js';
import type { DispatchOptions } from '../tools/dispatch-options.js';
import type { WorldChanged } from './world-state.js';
import type { JsonValue, WorldState } from './world-types.js';

/**
 * What a host that runs one scene across several processes (the Redis workers) changes in every
 * scene built while it holds them. Internal: a scene definition's `create` calls `createScene`
 * with options of its own, and these reach it around them, without any definition knowing.
 */
export type SceneHooks = {
  /** Makes the scene's world in place of the in-process one (a replica of a world kept elsewhere). */
  world?: (initial: Record<string, JsonValue>, onChange: WorldChanged) => WorldState;
  /** Sees the scene's bus as soon as it exists, before any event (as `SceneOptions.observe`). */
  observe?: (bus: Bus) => void;
  /** The scene's bus ids when its options name none: ids must stay unique across processes. */
  ids?: IdSource;
  /** Wraps every model provider of the cast (a takeover answers from the responses journaled). */
  provider?: (provider: Provider) => Provider;
  /** A takeover's journal of calls: how an attempt went when it was journaled before. */
  journal?: DispatchOptions['journal'];
  /** Write-ahead: a tool runs once this resolves (its `tool.started` is journaled elsewhere). */
  writeAhead?: (event: Envelope<'tool.started'>) => void | Promise<void>;
  /** Makes the scene's budget (`SceneOptions.budget`) with counters shared by every process (a `SharedBudget`). */
  budget?: (name: string, limits: BudgetLimits) => Budget;
  /**
   * Makes a scene-wide limiter whose slots every process shares, for `key`: `tools`
   * (`concurrency.tools`), `tool:<name>` (`concurrency.toolCalls` and a tool's own
   * `concurrency`), `model:<provider>` (`concurrency.modelCalls`) and `turns`
   * (`concurrency.turns`). Asked only for limits the scene sets, and for every provider's.
   */
  limit?: (key: string, concurrency: number) => LimitFunction;
  /** The turn window when the scene sets none (`concurrency.turns`, default 64). */
  turnWindow?: number;
};

const current = new AsyncLocalStorage<SceneHooks>();

/** Runs `build` (a scene definition's `create`) so that every scene it creates takes `hooks`. */
export function buildWithHooks<T>(hooks: SceneHooks, build: () => T): T {
  return current.run(hooks, build);
}

/** The hooks of the build in progress, if any. */
export function sceneHooks(): SceneHooks | undefined {
  return current.getStore();
}
