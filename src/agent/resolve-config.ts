import { silentLogger } from '../log/silent-logger.js';
import { createBus } from '../bus/bus.js';
import { ConfigError } from '../errors.js';
import type { ChatMessage, Provider, ToolChoice, ToolSpec } from '../llm/types.js';
import { renderManifest } from '../protocol/manifest.js';
import { DEFAULT_LIMITS, type ProtocolLimits } from '../protocol/types.js';
import { createSessionLog } from '../record/session-log.js';
import { createRegistry, type Registry } from '../tools/registry.js';
import type { Tool } from '../tools/types.js';
import type { AgentConfig, SharedParts } from './agent-config.js';
import type { AgentEngine, AgentOptions } from './agent-options.js';
import { DEFAULT_MODEL_RETRY, type ModelRetryPolicy } from './call-model.js';
import { MAX_TIMER_MS } from './retry-wait.js';
import { Budget } from './budget.js';
import { resolvePricing } from './resolve-pricing.js';
import { READ_VAR } from './memory/read-var-tool.js';
import { resolveMemory } from './memory/resolve-memory.js';
import { compileOutput } from './output-schema.js';
import { renderOutputSection } from '../protocol/output-section.js';


/**
 * Checks `createAgent` options and resolves their defaults into a frozen config. `shared` is what
 * a scene or a parent agent lends the agents it makes (limiters, its log, budgets).
 */
export function resolveConfig(options: AgentOptions, shared: SharedParts = {}): AgentConfig {
  if (options === null || typeof options !== 'object') throw new ConfigError('createAgent(options) takes an object');
  const { name, provider } = options;
  if (typeof name !== 'string' || name.trim() === '') throw new ConfigError('createAgent: `name` must be a non-empty string');
  assertProvider(provider, name);
  const maxObservationChars = positiveInteger(options.maxObservationChars ?? 8_000, 'maxObservationChars', name);
  const memory = resolveMemory(options.memory, provider, maxObservationChars, name);
  const tools = withMemoryTools(options.tools ?? [], memory?.tool, name);
  const registry = registryFor(tools);
  const protocol = options.protocol ?? 'xml';
  if (protocol !== 'xml' && protocol !== 'native') {
    throw new ConfigError(`createAgent "${name}": protocol must be 'xml' or 'native', got ${JSON.stringify(protocol)}`);
  }
  // Compact memory's read_var is allowed whatever the list says: the agent's history refers to it.
  const listed = options.allowedTools === undefined ? undefined : resolveAllowed(options.allowedTools, registry.names(), name, memory?.tool !== undefined ? [READ_VAR] : []);
  const toolChoice = options.toolChoice === undefined ? 'auto' : resolveToolChoice(options.toolChoice, listed === undefined ? registry.names() : [...listed], name);
  // `none` and a named tool narrow what may be called, and so what the manifest shows.
  const allowed = toolChoice === 'none' ? new Set<string>() : typeof toolChoice === 'object' ? new Set([toolChoice.tool]) : listed;
  const offered = allowed === undefined ? tools : tools.filter((tool) => allowed.has(tool.name));
  const limits = options.limits === undefined ? DEFAULT_LIMITS : resolveLimits(options.limits, name);
  const maxRounds = positiveInteger(options.maxRounds ?? 10, 'maxRounds', name);
  const maxCorrections = positiveInteger(options.maxCorrections ?? 3, 'maxCorrections', name);
  const concurrency = positiveInteger(options.concurrency ?? 8, 'concurrency', name);
  const toolTimeoutMs = nonNegative(options.toolTimeoutMs ?? 30_000, 'toolTimeoutMs', name);
  const bus = options.bus ?? createBus();
  const ownsLog = shared.log === undefined && typeof options.log === 'string';
  const log = shared.log ?? (typeof options.log === 'string' ? createSessionLog(options.log) : options.log);
  // A shared log records the shared bus already.
  if (shared.log === undefined) log?.attach(bus);
  const manifest = options.examples === undefined ? manifestFor(offered, protocol) : ownExamples(offered, protocol, options.examples, name);
  // Native providers refuse a history of calls to tools the request does not declare: declare them all.
  const declared = toolChoice === 'none' || typeof toolChoice === 'object' ? (listed === undefined ? tools : tools.filter((tool) => listed.has(tool.name))) : offered;
  const output = options.output === undefined ? undefined : compileOutput(options.output, name);
  // XML agents are told how to write the answer; native ones (and XML ones with nothing to call) get the schema on the wire.
  const outputSection = output !== undefined && protocol === 'xml' ? renderOutputSection(output.schema, { tools: offered.length > 0 }) : undefined;
  const budgets = shared.budgets ?? resolveBudget(options.budget, name);
  const systemPrompt = joinPrompt(options.instructions?.trim(), manifest, outputSection);
  // Checked in this order, so that of several wrong options the same one is reported as ever.
  const modelRetry = resolveRetry(options.modelRetry, name);
  const { prices, price } = resolvePricing(provider, options.prices, shared.prices, budgets, name);
  const onBeforeModel = optionalFunction(options.onBeforeModel, 'onBeforeModel', name);
  const repair = optionalFunction(options.repair, 'repair', name);
  const seed = resolveSeed(options.seed, name);
  const engine = resolveEngine(options, shared.engine, name);
  // One literal of fixed fields (the rare ones added after): spreading parts into it made V8
  // build it field by field, and each part was an object of its own.
  const config: Mutable<AgentConfig> = {
    name,
    bus,
    provider,
    registry,
    gated: gatedBy(tools),
    allowed,
    protocol,
    systemPrompt,
    systemMessage: systemMessageOf(systemPrompt),
    toolSpecs: protocol === 'native' ? specsFor(declared) : undefined,
    limits,
    maxRounds,
    maxCorrections,
    limiter: options.limiter,
    concurrency,
    toolLimiters: shared.toolLimiters,
    modelRetry,
    toolTimeoutMs,
    maxObservationChars,
    log,
    ownsLog,
    logger: options.logger ?? silentLogger,
    temperature: options.temperature,
    stream: options.stream ?? true,
    toolChoice,
    maxTokens: options.maxTokens,
    budgets,
    prices,
    price,
    onBeforeModel,
    repair,
    seed,
    journal: shared.journal,
    engine,
    inspect: options.inspect,
  };
  if (options.scene !== undefined) config.scene = options.scene;
  // Only agents with memory carry the field: a crowd of agents without it pays nothing.
  if (memory !== undefined) config.memory = memory;
  if (output !== undefined) config.output = Object.freeze({ compiled: output, native: protocol === 'native' || offered.length === 0 });
  return Object.freeze(config);
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The protocol limits over the defaults, each checked. */
function resolveLimits(own: Partial<ProtocolLimits>, agent: string): ProtocolLimits {
  const limits = { ...DEFAULT_LIMITS, ...own };
  for (const [key, value] of Object.entries(limits)) positiveInteger(value, `limits.${key}`, agent);
  return limits;
}

/** The system prompt's parts that are there, a blank line apart. */
function joinPrompt(...parts: (string | undefined)[]): string {
  let prompt = '';
  for (const part of parts) {
    if (part === undefined || part === '') continue;
    prompt = prompt === '' ? part : `${prompt}\n\n${part}`;
  }
  return prompt;
}

// Agents with the same prompt (the same tools, no instructions of their own) share its message.
// Bounded, like any cache keyed by what hosts write.
const systemMessages = new Map<string, ChatMessage>();

function systemMessageOf(prompt: string): ChatMessage | undefined {
  if (prompt === '') return undefined;
  let message = systemMessages.get(prompt);
  if (message === undefined) {
    message = Object.freeze({ role: 'system', content: prompt });
    if (systemMessages.size < 1_000) systemMessages.set(prompt, message);
  }
  return message;
}

const ENGINES: readonly unknown[] = ['compiled', 'xstate'];

/** Refuses an engine troupe does not have; `owner` names who gave it, for the error. */
export function checkEngine(engine: unknown, owner: string): asserts engine is AgentEngine | undefined {
  if (engine !== undefined && !ENGINES.includes(engine)) throw new ConfigError(`${owner}: engine must be 'compiled' or 'xstate', got ${JSON.stringify(engine)}`);
}

/** The engine (the agent's own, else its scene's or parent's, else compiled), with its inspector checked. */
function resolveEngine(options: AgentOptions, inherited: AgentEngine | undefined, agent: string): AgentEngine {
  const engine = options.engine ?? inherited ?? 'compiled';
  checkEngine(engine, `createAgent "${agent}"`);
  const { inspect } = options;
  if (inspect !== undefined) {
    if (engine !== 'xstate') {
      throw new ConfigError(`createAgent "${agent}": inspect needs engine: 'xstate' (a compiled agent is reported with inspectAgent(agent, inspect))`);
    }
    if (typeof inspect !== 'function' && (inspect === null || typeof inspect !== 'object')) {
      throw new ConfigError(`createAgent "${agent}": inspect must be an inspection observer or a function`);
    }
  }
  return engine;
}

const NOT_GATED = Object.freeze({ calls: false, results: false });

/** Whether any tool asks for approvals: most agents have none, and their rounds skip the gates. */
function gatedBy(tools: readonly Tool[]): AgentConfig['gated'] {
  const calls = tools.some((tool) => tool.needsApproval !== undefined && tool.needsApproval !== false);
  const results = tools.some((tool) => tool.needsResultApproval !== undefined && tool.needsResultApproval !== false);
  return calls || results ? Object.freeze({ calls, results }) : NOT_GATED;
}

function resolveSeed(seed: unknown, agent: string): number | undefined {
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isSafeInteger(seed))) {
    throw new ConfigError(`createAgent "${agent}": seed must be an integer, got ${String(seed)}`);
  }
  return seed;
}

/** The agent's tools plus the built-in `read_var` of compact history. */
function withMemoryTools(tools: readonly Tool[], readVar: Tool | undefined, agent: string): readonly Tool[] {
  if (readVar === undefined) return tools;
  if (Array.isArray(tools) && tools.some((tool) => tool?.name === READ_VAR)) {
    throw new ConfigError(`createAgent "${agent}": a tool is named "${READ_VAR}", which compact history adds itself; rename yours`);
  }
  return [...tools, readVar];
}

const NO_BUDGETS: readonly Budget[] = Object.freeze([]);

function resolveBudget(budget: AgentOptions['budget'], agent: string): readonly Budget[] {
  if (budget === undefined) return NO_BUDGETS;
  if (budget instanceof Budget) return [budget];
  if (budget === null || typeof budget !== 'object') throw new ConfigError(`createAgent "${agent}": budget must be an object of limits or a Budget`);
  return [new Budget(agent, budget, Date.now)];
}

// Agents built from one tool list share its registry, manifest and specs instead of a copy each.
const registries = new WeakMap<readonly Tool[], Registry>();

function registryFor(tools: readonly Tool[]): Registry {
  let registry = registries.get(tools);
  if (registry === undefined) registries.set(tools, (registry = createRegistry(tools)));
  return registry;
}

const manifests = new WeakMap<readonly Tool[], Map<string, string>>();
const specs = new WeakMap<readonly Tool[], readonly ToolSpec[]>();

function manifestFor(tools: readonly Tool[], protocol: 'xml' | 'native'): string {
  if (tools.length === 0) return '';
  let byProtocol = manifests.get(tools);
  if (byProtocol === undefined) manifests.set(tools, (byProtocol = new Map()));
  let text = byProtocol.get(protocol);
  if (text === undefined) byProtocol.set(protocol, (text = renderManifest(tools, { protocol })));
  return text;
}

/** The manifest with the user's examples (checked: a bad one is a ConfigError naming the agent). */
function ownExamples(tools: readonly Tool[], protocol: 'xml' | 'native', examples: AgentOptions['examples'], agent: string): string {
  if (tools.length === 0) throw new ConfigError(`createAgent "${agent}": examples need tools to call (the agent offers none)`);
  try {
    return renderManifest(tools, { protocol, examples });
  } catch (error) {
    throw error instanceof ConfigError ? new ConfigError(`createAgent "${agent}": ${error.message}`) : error;
  }
}

function specsFor(tools: readonly Tool[]): readonly ToolSpec[] {
  let list = specs.get(tools);
  if (list === undefined) {
    list = Object.freeze(tools.map(({ name, description, parameters }) => ({ name, description, parameters })));
    specs.set(tools, list);
  }
  return list;
}

function resolveAllowed(allowedTools: readonly string[] | undefined, known: string[], agent: string, always: readonly string[]): ReadonlySet<string> | undefined {
  if (allowedTools === undefined) return undefined;
  if (!Array.isArray(allowedTools)) throw new ConfigError(`createAgent "${agent}": allowedTools must be an array of tool names`);
  const registered = new Set(known);
  for (const tool of allowedTools) {
    if (!registered.has(tool)) {
      throw new ConfigError(`createAgent "${agent}": allowedTools names "${tool}", which is not among its tools (${known.join(', ') || 'none'})`);
    }
  }
  return new Set([...allowedTools, ...always]);
}

function resolveRetry(policy: ModelRetryPolicy | undefined, agent: string): Required<ModelRetryPolicy> {
  if (policy === undefined) return DEFAULT_MODEL_RETRY;
  const resolved = { ...DEFAULT_MODEL_RETRY, ...policy };
  positiveInteger(resolved.attempts, 'modelRetry.attempts', agent);
  // Past setTimeout's limit a wait would fire at once, and every attempt would go in a moment.
  timerMs(resolved.backoffMs, 'modelRetry.backoffMs', agent);
  timerMs(resolved.maxBackoffMs, 'modelRetry.maxBackoffMs', agent);
  timerMs(resolved.maxRetryAfterMs, 'modelRetry.maxRetryAfterMs', agent);
  return resolved;
}

function timerMs(value: unknown, option: string, agent: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIMER_MS)) {
    throw new ConfigError(`createAgent "${agent}": ${option} must be a number of ms from 0 to ${MAX_TIMER_MS} (about 24.8 days), got ${String(value)}`);
  }
  return value;
}

const TOOL_CHOICES: readonly string[] = ['auto', 'required', 'none'];

function resolveToolChoice(choice: ToolChoice | undefined, callable: readonly string[], agent: string): ToolChoice {
  if (choice === undefined) return 'auto';
  if (typeof choice === 'object' && choice !== null && typeof (choice as { tool?: unknown }).tool === 'string') {
    if (!callable.includes(choice.tool)) {
      throw new ConfigError(`createAgent "${agent}": toolChoice names "${choice.tool}", which it cannot call (its tools: ${callable.join(', ') || 'none'})`);
    }
    return Object.freeze({ tool: choice.tool });
  }
  if (typeof choice !== 'string' || !TOOL_CHOICES.includes(choice)) {
    throw new ConfigError(`createAgent "${agent}": toolChoice must be 'auto', 'required', 'none' or { tool: name }, got ${JSON.stringify(choice)}`);
  }
  return choice;
}

function assertProvider(provider: Provider | undefined, agent: string): asserts provider is Provider {
  if (provider === null || typeof provider !== 'object' || typeof provider.complete !== 'function') {
    throw new ConfigError(`createAgent "${agent}": \`provider\` must have a complete(request) method (try scriptedProvider([...]))`);
  }
}

function optionalFunction<T>(value: T | undefined, option: string, agent: string): T | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw new ConfigError(`createAgent "${agent}": ${option} must be a function, got ${value === null ? 'null' : typeof value}`);
  }
  return value;
}

function positiveInteger(value: unknown, option: string, agent: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError(`createAgent "${agent}": ${option} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

function nonNegative(value: unknown, option: string, agent: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ConfigError(`createAgent "${agent}": ${option} must be a number ≥ 0, got ${String(value)}`);
  }
  return value;
}
