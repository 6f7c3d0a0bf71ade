import type { Logger } from 'pino';
import type { TroupeEvents } from '../../bus/events.js';
import { errorMessage } from '../../errors.js';
import type { ChatMessage, ModelRequest } from '../../llm/types.js';
import { budgetedModelCall, type Budget } from '../budget.js';
import { roundCalls, type RunState } from '../run/run-state.js';
import { dropOldest, type CompactionPolicy, type CompactionRequest, type CompactionResult, type MemoryTurn } from './compaction.js';
import { compactTurn, LOG_MARK, type ChainCall, type ChainStep, type CompactLimits } from './compact-turn.js';
import { READ_VAR, readVarTool } from './read-var-tool.js';
import { countMessageTokens, tokenizerFor, type TokenCounter, type TokenEncoding } from './token-count.js';
import { DEFAULT_VARIABLE_LIMITS, VariableStore, type VariableInfo, type VariableLimits, type VariableRead, type VariablesSnapshot } from './variables.js';
import type { Tool } from '../../tools/types.js';
import type { PriceTable } from '../../llm/prices.js';
import { IMAGES_FOLLOW, type ObservedCall } from '../observation-text.js';
import { closeUnread, unreadNote, withoutImages } from './unread-calls.js';
import { countMessages, queryMessages, type MessageQuery, type MessageRole } from './message-query.js';

/** The `memory` option of `createAgent`: a history kept across runs, under a token budget. */
export type MemoryOptions = {
  /** Tokens the kept history may hold (default 16,000); past it, the compaction policy runs. */
  maxTokens?: number;
  /**
   * `full` (default) keeps every message as the model saw it. `compact` stores a finished tool
   * chain as one assistant message with an execution log, its results in variables the model
   * reads back with the built-in `read_var` tool.
   */
  history?: 'full' | 'compact';
  /** How the history is brought back under `maxTokens` (default `dropOldest()`). */
  compaction?: CompactionPolicy;
  /** Counts tokens (default: the provider family's tokenizer, see `tokenizerFor`). */
  countTokens?: TokenCounter;
  /** Bounds on the result variables of compact history. */
  variables?: VariableLimits;
  /** Characters of arguments and of a result preview in an execution-log line (default 200 each). */
  previewChars?: number;
};

/** An agent's kept history: read it, measure it, clear it (`agent.memory`). */
export type AgentMemory = {
  readonly history: 'full' | 'compact';
  readonly maxTokens: number;
  /** The encoding that counts tokens, or `undefined` when a custom `countTokens` does. */
  readonly encoding: TokenEncoding | undefined;
  /** The name of the compaction policy. */
  readonly policy: string;
  /**
   * The kept messages, oldest first, as the next run will send them after the system prompt; or
   * those a query picks: by role, then by range or the last n (`{ role: 'user', last: 3 }`).
   */
  messages(query?: MessageQuery): ChatMessage[];
  /** How many messages are kept, of one role or several if given. */
  messageCount(role?: MessageRole | readonly MessageRole[]): number;
  /** The kept turns (one per run or scene turn, or a summary), oldest first. */
  turns(): readonly MemoryTurn[];
  /** Tokens of the kept history. */
  tokens(): number;
  /** Tokens of text or messages with this agent's counter. */
  countTokens(input: string | readonly ChatMessage[]): number;
  /** The stored result variables (compact history), oldest first. */
  variables(): VariableInfo[];
  /** A page of a variable, as `read_var` reads it. */
  readVar(ref: string, options?: { offset?: number; length?: number }): VariableRead;
  /** Forgets the history and the variables (references are never reused). */
  clear(): void;
  /** Resolves once no compaction is running (an async summarizer may still be writing). */
  settled(): Promise<void>;
};

/** What the memory needs of its agent at the end of a run. */
export type MemoryHost = {
  readonly name: string;
  publish(type: 'memory.compacted', data: TroupeEvents['memory.compacted'], cause?: string): unknown;
  readonly logger: Logger;
  /** The agent's budgets: a compaction's model calls are charged to them. */
  readonly budgets: readonly Budget[];
  /** The agent's price table: a compaction's call is priced by its provider's model. */
  readonly prices?: PriceTable;
};

/** A memory as plain data, for an agent's snapshot (a compaction in flight is not in it: it runs again). */
export type MemorySnapshot = {
  kept: MemoryTurn[];
  total: number;
  variables?: VariablesSnapshot;
  /** The run in progress: where its messages start, its chain so far, its last observed round's variables. */
  start: number;
  steps: ChainStep[];
  lastRound: number;
  refs?: [string, string][];
};

const DEFAULT_MAX_TOKENS = 16_000;
const DEFAULT_PREVIEW_CHARS = 200;

/**
 * The memory of one agent: the turns kept between runs, its token count, and (with compact
 * history) the result variables. The runtime calls `begin` when a run starts, `observed` after
 * each round's observation and `commit` when the run ends; everything else is the public view.
 */
export class Memory implements AgentMemory {
  readonly history: 'full' | 'compact';
  readonly maxTokens: number;
  readonly encoding: TokenEncoding | undefined;
  readonly policy: string;
  /** The built-in `read_var` tool, with compact history. */
  readonly tool: Tool | undefined;
  private readonly count: TokenCounter;
  private readonly compaction: CompactionPolicy;
  private readonly store: VariableStore | undefined;
  private readonly limits: CompactLimits;
  private kept: MemoryTurn[] = [];
  private total = 0;
  /** Bumped by `clear`: a compaction that started before it is discarded. */
  private generation = 0;
  private pending: Promise<void> | undefined;
  /** Aborted by `clear` (then replaced) and by `close` (for good): a compaction's model calls stop. */
  private discard = new AbortController();
  // The run in progress: where its messages start, and its chain so far.
  private start = 0;
  private steps: ChainStep[] = [];
  private lastRound = 0;
  /** The variables of the last observed round's calls, by call id. */
  private refs: Map<string, string> | undefined;

  constructor(options: MemoryOptions, provider: { name: string; model?: string | undefined }, pageChars: number) {
    this.history = options.history ?? 'full';
    this.maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.compaction = options.compaction ?? dropOldest();
    this.policy = this.compaction.name;
    if (options.countTokens !== undefined) {
      this.count = options.countTokens;
      this.encoding = undefined;
    } else {
      const tokenizer = tokenizerFor(provider);
      this.count = tokenizer.count;
      this.encoding = tokenizer.encoding;
    }
    const preview = options.previewChars ?? DEFAULT_PREVIEW_CHARS;
    this.limits = { argsChars: preview, previewChars: preview };
    if (this.history === 'compact') {
      this.store = new VariableStore({ ...DEFAULT_VARIABLE_LIMITS, ...options.variables });
      this.tool = readVarTool(this.store, pageChars);
    } else {
      this.store = undefined;
      this.tool = undefined;
    }
  }

  messages(query?: MessageQuery): ChatMessage[] {
    const all = this.kept.flatMap((turn) => turn.messages);
    return query === undefined ? all : queryMessages(all, query);
  }

  messageCount(role?: MessageRole | readonly MessageRole[]): number {
    return countMessages(this.kept, role);
  }

  turns(): readonly MemoryTurn[] {
    return [...this.kept];
  }

  tokens(): number {
    return this.total;
  }

  countTokens(input: string | readonly ChatMessage[]): number {
    return typeof input === 'string' ? this.count(input) : countMessageTokens(input, this.count);
  }

  variables(): VariableInfo[] {
    return this.store?.list() ?? [];
  }

  readVar(ref: string, options: { offset?: number; length?: number } = {}): VariableRead {
    if (this.store === undefined) return { ok: false, code: 'unknown', message: 'variables are kept only with history: compact' };
    return this.store.read(ref, options.offset ?? 0, options.length ?? Number.POSITIVE_INFINITY);
  }

  clear(): void {
    this.kept = [];
    this.total = 0;
    this.generation++;
    this.store?.clear();
    if (!this.discard.signal.aborted) {
      this.discard.abort(new DOMException('memory cleared: the compaction is discarded', 'AbortError'));
      this.discard = new AbortController();
    }
  }

  /** The memory as plain data (bytes and all: `encodePlain` makes it JSON). */
  snapshot(): MemorySnapshot {
    const snapshot: MemorySnapshot = { kept: [...this.kept], total: this.total, start: this.start, steps: [...this.steps], lastRound: this.lastRound };
    if (this.store !== undefined) snapshot.variables = this.store.snapshot();
    if (this.refs !== undefined) snapshot.refs = [...this.refs];
    return snapshot;
  }

  /** Takes up a snapshot's history, variables and run in progress. */
  restore(snapshot: MemorySnapshot): void {
    this.clear();
    this.kept = [...snapshot.kept];
    this.total = snapshot.total;
    if (snapshot.variables !== undefined) this.store?.restore(snapshot.variables);
    this.start = snapshot.start;
    this.steps = [...snapshot.steps];
    this.lastRound = snapshot.lastRound;
    this.refs = snapshot.refs === undefined ? undefined : new Map(snapshot.refs);
  }

  /** The agent closed: a compaction in flight is aborted, and later ones make no model call. */
  close(): void {
    this.discard.abort(new DOMException('agent closed', 'AbortError'));
  }

  settled(): Promise<void> {
    return this.pending ?? Promise.resolve();
  }

  /** Puts the kept history into a new run's messages, before its input (the last message). */
  begin(messages: ChatMessage[]): void {
    const history = this.messages();
    messages.splice(messages.length - 1, 0, ...history);
    this.start = messages.length - 1;
    this.steps = [];
    this.lastRound = 0;
    this.refs = undefined;
  }

  /**
   * Records a round's outcome for compact history and stores its results as variables. Returns the
   * observation text, with the variables named under it so the model can page past a cut.
   */
  observed(run: RunState, observed: readonly ObservedCall[], text: string): string {
    if (this.store === undefined) return text;
    const argsOf = new Map(roundCalls(run).map((entry) => [entry.call.callId, entry.call.args]));
    const calls: ChainCall[] = observed.map((call) => {
      const entry: ChainCall = { call, args: argsOf.get(call.callId) ?? {} };
      // A page read back is already stored: keeping it again would only evict older results.
      if (call.status === 'completed' && call.name !== READ_VAR) entry.ref = this.store!.store(call.name, call.callId, call.output);
      return entry;
    });
    this.steps.push({ text: run.parsed?.text ?? '', calls });
    this.lastRound = run.round;
    const stored = calls.filter((entry) => entry.ref !== undefined);
    this.refs = new Map(stored.map((entry) => [entry.call.callId, entry.ref!]));
    if (stored.length === 0) return text;
    return `${text}\n\n(Full results stored: ${stored.map((entry) => `${entry.call.name} → ${entry.ref}`).join(', ')}; read_var reads them.)`;
  }

  /** A native tool message's content, with the variable its result went to (this round's calls). */
  toolMessage(callId: string, content: string): string {
    const ref = this.refs?.get(callId);
    return ref === undefined ? content : `${content}\n(Full result stored in ${ref}; read_var reads it.)`;
  }

  /**
   * Keeps the run's messages as one turn (compacted with compact history), then brings the history
   * under budget. Returns a promise only while an async policy runs.
   */
  commit(run: RunState, host: MemoryHost): Promise<void> | undefined {
    const raw = run.messages.slice(this.start);
    const steps = this.steps;
    this.steps = [];
    this.refs = undefined;
    const unread = closeUnread(run, raw);
    // A run the model never answered (aborted before it, or a failed first call) leaves nothing.
    if (!raw.some((message) => message.role === 'assistant')) return undefined;
    // Image bytes are not kept: the token budget cannot measure them, and every later run would
    // send them again. Their placeholder lines stay in the text.
    let messages: ChatMessage[] = raw.filter((message) => !(message.role === 'user' && message.content === IMAGES_FOLLOW && message.images !== undefined)).map(withoutImages);
    if (this.store !== undefined && (steps.length > 0 || raw.length > 2)) {
      if (run.parsed !== undefined && run.round > this.lastRound) steps.push({ text: run.parsed.text, calls: [] });
      const compact = compactTurn(steps, this.limits);
      messages = [messages[0]!, { role: 'assistant', content: unread.length === 0 ? compact : `${compact}\n\n${LOG_MARK} ${unreadNote(unread)}` }];
    }
    const turn: MemoryTurn = { messages, tokens: countMessageTokens(messages, this.count) };
    this.kept.push(turn);
    this.total += turn.tokens;
    if (this.total <= this.maxTokens) return undefined;
    // One compaction at a time: a run that ends while one is in flight compacts after it.
    if (this.pending !== undefined) return this.hold(this.pending.then(() => this.compact(host, run.cause)));
    const outcome = this.compact(host, run.cause);
    return outcome === undefined ? undefined : this.hold(outcome);
  }

  private hold(work: Promise<void>): Promise<void> {
    const pending = work.finally(() => {
      if (this.pending === pending) this.pending = undefined;
    });
    this.pending = pending;
    return pending;
  }

  /** Runs the policy on the kept turns; applies its result when it is ready. */
  private compact(host: MemoryHost, cause: string | undefined): Promise<void> | undefined {
    if (this.total <= this.maxTokens) return undefined;
    const snapshot = this.kept.slice();
    const before = this.total;
    const generation = this.generation;
    const signal = this.discard.signal;
    const request: CompactionRequest = {
      turns: snapshot,
      tokens: before,
      maxTokens: this.maxTokens,
      countTokens: (messages) => countMessageTokens(messages, this.count),
      agent: host.name,
      signal,
      complete: (provider, messages, options = {}) => {
        const call: ModelRequest = { messages, signal, round: 1, agent: host.name };
        if (options.maxTokens !== undefined) call.maxTokens = options.maxTokens;
        return budgetedModelCall(host.budgets, provider, call, 'compaction refused a model call: ', host.prices);
      },
    };
    const apply = (result: CompactionResult | undefined, error?: unknown): void => {
      if (generation !== this.generation) return;
      this.apply(host, cause, snapshot, before, result, error);
    };
    let outcome: CompactionResult | Promise<CompactionResult>;
    try {
      outcome = this.compaction.compact(request);
    } catch (error) {
      apply(undefined, error);
      return undefined;
    }
    if (!(outcome instanceof Promise)) {
      apply(outcome);
      return undefined;
    }
    return outcome.then(apply, (error: unknown) => apply(undefined, error));
  }

  /**
   * Replaces the snapshot's turns by the policy's (turns kept since the snapshot stay after them),
   * drops the oldest turns while the budget is still exceeded, and publishes `memory.compacted`.
   */
  private apply(
    host: MemoryHost,
    cause: string | undefined,
    snapshot: readonly MemoryTurn[],
    before: number,
    result: CompactionResult | undefined,
    error: unknown,
  ): void {
    const added = this.kept.slice(snapshot.length);
    let turns: MemoryTurn[];
    let dropped = 0;
    let summarized = 0;
    const malformed = result !== undefined && Array.isArray(result.turns) && !result.turns.every((turn) => Array.isArray((turn as { messages?: unknown } | null)?.messages));
    if (result === undefined || !Array.isArray(result.turns) || malformed) {
      if (error === undefined) error = new TypeError(malformed ? 'the policy returned a turn without a messages array' : 'the policy returned no turns');
      host.logger.warn({ agent: host.name, err: error }, `compaction policy ${this.policy} failed; dropping the oldest turns`);
      turns = [...snapshot];
    } else {
      const known = new Map(snapshot.map((turn) => [turn.messages, turn]));
      turns = result.turns.map(
        (turn) => known.get(turn.messages) ?? { messages: turn.messages, tokens: countMessageTokens(turn.messages, this.count), ...(turn.summary === true && { summary: true }) },
      );
      dropped = result.dropped;
      summarized = result.summarized;
    }
    turns.push(...added);
    let total = turns.reduce((sum, turn) => sum + turn.tokens, 0);
    // The budget holds whatever the policy did: the oldest turns go after its result.
    let fallback = false;
    while (total > this.maxTokens && turns.length > 0) {
      total -= turns.shift()!.tokens;
      dropped++;
      fallback = true;
    }
    this.kept = turns;
    this.total = total;
    const data: TroupeEvents['memory.compacted'] = {
      policy: this.policy,
      beforeTokens: before,
      afterTokens: total,
      maxTokens: this.maxTokens,
      turnsDropped: dropped,
      turnsSummarized: summarized,
      turnsKept: turns.length,
      fallback,
    };
    if (error !== undefined) data.error = errorMessage(error);
    host.publish('memory.compacted', data, cause);
  }
}

/**
 * Keeps a finished run in the memory; never throws, so that a throwing custom token counter cannot
 * leave the run unresolved. Returns a promise only while an async compaction policy runs.
 */
export function commitRun(memory: Memory, run: RunState, host: MemoryHost): Promise<void> | undefined {
  try {
    return memory.commit(run, host);
  } catch (error) {
    host.logger.error({ agent: host.name, err: error }, 'memory could not keep the run');
    return undefined;
  }
}
