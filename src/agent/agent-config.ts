import type { LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import type { ChatMessage, Provider, ToolChoice, ToolSpec } from '../llm/types.js';
import type { ProtocolLimits } from '../protocol/types.js';
import type { SessionLog } from '../record/session-log.js';
import type { ToolLimiters } from '../tools/acquire-slot.js';
import type { DispatchOptions } from '../tools/dispatch-options.js';
import type { Registry } from '../tools/registry.js';
import type { ModelRetryPolicy } from './call-model.js';
import type { AgentEngine, AgentOptions, RepairFunction } from './agent-options.js';
import type { AgentInspect } from './xstate-engine.js';
import type { Budget } from './budget.js';
import type { Memory } from './memory/agent-memory.js';
import type { CompiledOutput } from './output-schema.js';
import type { ModelPrice, PriceTable } from '../llm/prices.js';

/**
 * Everything an agent needs that does not change between runs: `createAgent`'s options checked,
 * with their defaults, frozen once resolved. (The memory and the budgets it names are live
 * objects, but which ones an agent has never changes.)
 */
export type AgentConfig = Readonly<{
  name: string;
  bus: Bus;
  provider: Provider;
  registry: Registry;
  /** Whether any of the agent's tools holds calls (`needsApproval`) or results (`needsResultApproval`) for approval. */
  gated: Readonly<{ calls: boolean; results: boolean }>;
  allowed: ReadonlySet<string> | undefined;
  protocol: 'xml' | 'native';
  systemPrompt: string;
  /** The system prompt as the first message of every run (one frozen object), if there is one. */
  systemMessage: ChatMessage | undefined;
  toolSpecs: readonly ToolSpec[] | undefined;
  limits: ProtocolLimits;
  maxRounds: number;
  maxCorrections: number;
  scene?: string;
  /** A global tool limiter shared with others, when the host gave one; else the agent makes its own. */
  limiter: LimitFunction | undefined;
  concurrency: number;
  /** Per-tool limiters shared with others (a scene's, a parent agent's); else the agent makes its own. */
  toolLimiters: ToolLimiters | undefined;
  modelRetry: Required<ModelRetryPolicy>;
  toolTimeoutMs: number;
  maxObservationChars: number;
  log: SessionLog | undefined;
  /** The agent opened the log (from a path) and closes it. */
  ownsLog: boolean;
  logger: Logger;
  temperature: number | undefined;
  stream: boolean;
  toolChoice: ToolChoice;
  maxTokens: number | undefined;
  /** Checked before every model call and every round's tool calls: the agent's, then its scene's. */
  budgets: readonly Budget[];
  /** Prices by model (the defaults under the agent's or its scene's own), for every call it makes. */
  prices: PriceTable;
  /** The price of the provider's model, when the table knows it: each call's usage gets its cost. */
  price: ModelPrice | undefined;
  onBeforeModel: AgentOptions['onBeforeModel'];
  repair: RepairFunction | undefined;
  /** A resume's journal of calls: a call whose end the log holds is not run again. */
  journal: DispatchOptions['journal'];
  /** Seeds the agent's generator; `undefined` draws a seed when the generator is first used. */
  seed: number | undefined;
  /** What steps the statechart: the compiled table, or an XState actor of the agent's own. */
  engine: AgentEngine;
  /** The inspection observer of the agent's XState actor (`engine: 'xstate'` only). */
  inspect: AgentInspect | undefined;
  /** The history kept between runs, with the `memory` option. */
  memory?: Memory;
  /**
   * The final answer's schema, with the `output` option; `native`: sent to the provider too
   * (native protocol, or XML with no tool to call).
   */
  output?: Readonly<{ compiled: CompiledOutput; native: boolean }>;
}>;

/**
 * What a scene or a parent agent gives the agents it makes, beside their options: limits, a log
 * and budgets shared with others, and the seed it derived for them. Internal: users pass options.
 */
export type SharedParts = {
  toolLimiters?: ToolLimiters;
  /** The log that already records the shared bus (its write-ahead check only). */
  log?: SessionLog;
  budgets?: readonly Budget[];
  /** The scene's price table (its `prices` over the defaults). */
  prices?: PriceTable;
  journal?: DispatchOptions['journal'];
  /** The engine of the scene or parent agent: the agent's own when its options name none. */
  engine?: AgentEngine;
};
