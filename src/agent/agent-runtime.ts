import { getEventListeners } from 'node:events';
import type { LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import type { AgentMachineContext, AgentMachineEvent, AgentStateName } from '../../machines/agent.machine.js';
import type { Bus, EventMeta } from '../bus/bus.js';
import type { Envelope, EventType, RunReason, TroupeEvents } from '../bus/events.js';
import { TroupeError } from '../errors.js';
import { checkInputImages } from '../tools/result-parts.js';
import type { ChatMessage, ModelRequest, Provider, ToolChoice, ToolSpec } from '../llm/types.js';
import type { Args, ProtocolLimits } from '../protocol/types.js';
import type { SessionLog } from '../record/session-log.js';
import type { Registry } from '../tools/registry.js';
import type { RetryPolicy } from '../tools/types.js';
import type { Agent, AgentOptions, PendingApproval, PendingResultApproval, RepairFunction, RunOptions, RunResult } from './agent-options.js';
import type { Budget } from './budget.js';
import type { AgentMemory, Memory } from './memory/agent-memory.js';
import type { Publish } from './call-model.js';
import { stableKey } from './stable-key.js';
import type { RunState } from './run-state.js';
import * as stages from './stages.js';
import type { FlatMachine } from './flat-machine.js';

/** Everything an agent needs that does not change between runs. */
export type AgentConfig = {
  name: string;
  bus: Bus;
  provider: Provider;
  registry: Registry;
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
  /** The global tool limiter: shared when the host gave one, else made at the first dispatch. */
  limiter: LimitFunction | undefined;
  concurrency: number;
  toolLimiters: Map<string, LimitFunction> | undefined;
  modelRetry: Required<RetryPolicy>;
  toolTimeoutMs: number;
  maxObservationChars: number;
  log: SessionLog | undefined;
  ownsLog: boolean;
  logger: Logger;
  temperature: number | undefined;
  stream: boolean;
  toolChoice: ToolChoice;
  maxTokens: number | undefined;
  /** Checked before every model call and every turn's tool calls: the agent's, then its scene's. */
  budgets: readonly Budget[];
  onBeforeModel: AgentOptions['onBeforeModel'];
  repair: RepairFunction | undefined;
  /** The history kept between runs, with the `memory` option. */
  memory?: Memory;
};

/**
 * The live agent: an actor in the actor-model sense (it takes one message at a time from its
 * mailbox) whose behaviour is the agent statechart, compiled once for all agents. It owns the
 * current run and implements the stages the machine names. Methods live on the prototype, and an
 * idle agent holds only the name of its state, so ten thousand agents stay cheap.
 */
export class AgentRuntime implements Agent {
  readonly config: AgentConfig;
  state: AgentStateName = 'idle';
  current: RunState | undefined;
  /** The machine's current state (`state` is what was last published). */
  private at: string;
  private readonly context: AgentMachineContext;
  /** Events sent while a transition runs (by a stage or a subscriber), taken in order after it. */
  private mailbox: AgentMachineEvent[] | undefined;
  private stepping = false;
  private runs = 0;
  private closed = false;
  private readonly machine: FlatMachine<AgentMachineContext>;
  /** Reused for every event this agent publishes: the bus copies what it needs. */
  private readonly meta: EventMeta;

  constructor(config: AgentConfig, machine: FlatMachine<AgentMachineContext>) {
    this.config = config;
    this.machine = machine;
    this.context = { host: this };
    this.meta = config.scene === undefined ? { agent: config.name } : { agent: config.name, scene: config.scene };
    this.at = machine.start(this.context);
    this.publish('agent.spawned', {
      name: config.name,
      tools: config.registry.names(),
      protocol: config.protocol,
    });
  }

  get name(): string {
    return this.config.name;
  }

  get bus(): Bus {
    return this.config.bus;
  }

  get memory(): AgentMemory | undefined {
    return this.config.memory;
  }

  run(input: string, options: RunOptions = {}): Promise<RunResult> {
    return new Promise<RunResult>((resolve, reject) => {
      try {
        this.runWith(input, options, resolve);
      } catch (error) {
        reject(error);
      }
    });
  }

  /**
   * `run` with a callback: `done` is called once with the result, synchronously when the whole run
   * could finish at once (a scripted brain whose tools all answered at once). Scenes use it to run
   * a tick of such turns without a hop through the microtask queue per turn. Throws the host
   * errors `run` rejects with.
   */
  runWith(input: string, options: RunOptions, done: (result: RunResult) => void): void {
    if (this.closed) throw new TroupeError('invalid_config', `agent "${this.name}" is closed`);
    if (this.current !== undefined) {
      throw new TroupeError('agent_busy', `agent "${this.name}" is already running; await its run or abort it first`);
    }
    if (typeof input !== 'string') throw new TroupeError('invalid_config', 'agent.run(input) takes a string');
    const { rounds } = options;
    if (rounds !== undefined && (!Number.isSafeInteger(rounds) || rounds < 1)) {
      throw new TroupeError('invalid_config', `agent.run: rounds must be a positive integer, got ${String(rounds)}`);
    }
    // Checked like a rich result's images, whatever the provider takes: a bad image is a host bug.
    const images = options.images === undefined ? undefined : checkInputImages(options.images);
    if (images !== undefined && !images.ok) throw new TroupeError('invalid_config', `agent.run: ${images.problem}`);
    const system = this.config.systemMessage;
    const user: ChatMessage = { role: 'user', content: input };
    if (images !== undefined && images.value.length > 0 && this.config.provider.accepts?.imagesInUserMessages === true) {
      user.images = images.value;
    }
    const messages: ChatMessage[] = system === undefined ? [user] : [system, user];
    this.config.memory?.begin(messages);
    const run: RunState = {
      number: ++this.runs,
      controller: this.takeController(),
      resolve: done,
      messages,
      startedAt: this.config.bus.clock(),
      round: 0,
      corrections: 0,
      repairs: 0,
      nudging: false,
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      history: [],
      dispatched: 0,
      turn: { kind: 'none' },
      text: '',
      finished: false,
    };
    if (rounds !== undefined) run.turnRounds = rounds;
    if (options.cause !== undefined) run.cause = options.cause;
    this.current = run;
    const external = options.signal;
    if (external?.aborted) {
      run.error = 'aborted before it started';
      run.controller.abort(external.reason);
    } else if (external !== undefined) {
      const onAbort = (): void => this.abortRun(run, 'aborted by the caller');
      external.addEventListener('abort', onAbort, { once: true });
      // A caller may pass one long-lived signal to many runs: leave no listener behind.
      run.detach = () => external.removeEventListener('abort', onAbort);
    }
    this.step(EVENTS.run);
  }

  pendingApprovals(): PendingApproval[] {
    const turn = this.current?.turn;
    if (this.state !== 'awaitingApproval' || turn?.kind !== 'calls') return [];
    return turn.calls
      .filter((entry) => entry.argsKey !== undefined && entry.decision === undefined)
      .map(({ call, argsHash }) => ({ callId: call.callId, name: call.name, args: call.args, argsHash: argsHash! }));
  }

  approve(callId: string, options: { args?: Args; argsHash?: string } = {}): boolean {
    const entry = this.pendingEntry(callId, 'approve');
    if (entry === undefined) return false;
    if (options.args !== undefined && stableKey(options.args) !== entry.argsKey) {
      this.config.logger.warn({ agent: this.name, callId }, 'approval refused: arguments differ from the request');
      return false;
    }
    if (options.argsHash !== undefined && options.argsHash !== entry.argsHash) {
      this.config.logger.warn({ agent: this.name, callId }, 'approval refused: argsHash is not the request\'s');
      return false;
    }
    return stages.decide(this, this.current!, entry, true, 'approved');
  }

  deny(callId: string, reason = 'denied by the operator'): boolean {
    checkReason(reason, 'deny');
    const entry = this.pendingEntry(callId, 'deny');
    if (entry === undefined) return false;
    return stages.decide(this, this.current!, entry, false, reason);
  }

  pendingResultApprovals(): PendingResultApproval[] {
    const turn = this.current?.turn;
    if (this.state !== 'awaitingResultApproval' || turn?.kind !== 'calls') return [];
    return stages
      .heldResults(turn)
      .filter(({ entry }) => entry.outputHash !== undefined && entry.resultDecision === undefined)
      .map(({ entry, result }) => ({ callId: entry.call.callId, name: entry.call.name, args: entry.call.args, output: result.output, outputHash: entry.outputHash! }));
  }

  approveResult(callId: string, options: { outputHash?: string } = {}): boolean {
    const entry = this.pendingResult(callId, 'approveResult');
    if (entry === undefined) return false;
    if (options.outputHash !== undefined && options.outputHash !== entry.outputHash) {
      this.config.logger.warn({ agent: this.name, callId }, 'result approval refused: outputHash is not the request\'s');
      return false;
    }
    return stages.decideResult(this, this.current!, entry, true, 'approved');
  }

  rejectResult(callId: string, reason = 'rejected by the operator'): boolean {
    checkReason(reason, 'rejectResult');
    const entry = this.pendingResult(callId, 'rejectResult');
    if (entry === undefined) return false;
    return stages.decideResult(this, this.current!, entry, false, reason);
  }

  abort(reason = 'aborted'): void {
    if (this.current !== undefined) this.abortRun(this.current, reason);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.abort('agent closed');
    this.closed = true;
    this.config.memory?.close();
    if (this.config.ownsLog) await this.config.log?.close();
  }

  /** Publishes on the bus as this agent, following the run's cause chain. */
  publish<K extends EventType>(type: K, data: TroupeEvents[K], cause?: string): Envelope<K> {
    const { meta } = this;
    meta.cause = cause ?? this.current?.cause;
    const envelope = this.config.bus.publish(type, data, meta);
    // Hold no id between runs: an idle agent keeps nothing of its last turn alive.
    meta.cause = undefined;
    return envelope;
  }

  /** `publish` as a function value, for the dispatcher and the model call; made once, when first needed. */
  get publishAsAgent(): Publish {
    return (this.boundPublish ??= (type, data) => this.publish(type, data));
  }

  /** Sends an event to the machine on behalf of `run`, unless that run is over. */
  send(run: RunState, type: Exclude<AgentMachineEvent['type'], 'run'>): void {
    if (this.current !== run || run.finished) return;
    this.step(EVENTS[type]);
  }

  /** The request for the next deliberation. */
  request(run: RunState): ModelRequest {
    const request: ModelRequest = {
      messages: run.messages,
      signal: run.controller.signal,
      round: run.round,
      agent: this.config.name,
    };
    if (this.config.protocol === 'native' && this.config.toolSpecs !== undefined) {
      // The nudge still declares the tools (providers refuse a history of calls to undeclared
      // tools) but forbids calling them.
      request.tools = this.config.toolSpecs;
      request.toolChoice = run.nudging ? 'none' : this.config.toolChoice;
    }
    if (this.config.protocol === 'xml' && !run.nudging) request.stop = STOP_AT_CLOSER;
    if (this.config.temperature !== undefined) request.temperature = this.config.temperature;
    if (this.config.maxTokens !== undefined) request.maxTokens = this.config.maxTokens;
    return request;
  }

  /** Ends the run once: publishes `agent.finished` and resolves `run()`. */
  settle(run: RunState, reason: RunReason): void {
    if (run.finished) return;
    run.finished = true;
    run.detach?.();
    this.keepController(run.controller);
    if (this.current === run) this.current = undefined;
    const stats = {
      rounds: run.round,
      calls: run.dispatched,
      corrections: run.corrections,
      repairs: run.repairs,
      durationMs: this.config.bus.clock() - run.startedAt,
      usage: run.usage,
      history: run.history,
    };
    const result: RunResult = { reason, text: run.text, rounds: run.round, calls: run.history, usage: run.usage, stats };
    if (run.error !== undefined) result.error = run.error;
    if (run.lastIssues !== undefined) result.issues = run.lastIssues;
    if (run.observation !== undefined) result.observation = run.observation;
    const data: TroupeEvents['agent.finished'] = { reason, text: run.text, rounds: run.round, stats };
    if (run.error !== undefined) data.error = run.error;
    if (run.lastIssues !== undefined) data.issues = run.lastIssues;
    // The run joins the kept history before `agent.finished`, so a run started from a subscriber sees it.
    const compacting = this.commitMemory(run);
    this.publish('agent.finished', data, run.cause);
    // An async compaction policy (a summarizing model) finishes before the run resolves.
    if (compacting === undefined) run.resolve(result);
    else {
      // Resolves whatever became of the compaction: a policy or counter that throws must not hang run().
      const resolve = (): void => run.resolve(result);
      compacting.then(resolve, (error: unknown) => {
        this.config.logger.error({ agent: this.name, err: error }, 'memory compaction failed');
        resolve();
      });
    }
  }

  private commitMemory(run: RunState): Promise<void> | undefined {
    const { memory } = this.config;
    if (memory === undefined) return undefined;
    try {
      return memory.commit(run, { name: this.name, logger: this.config.logger, budgets: this.config.budgets, publish: (type, data, cause) => this.publish(type, data, cause) });
    } catch (error) {
      // A throwing custom token counter must not leave the run unresolved.
      this.config.logger.error({ agent: this.name, err: error }, 'memory could not keep the run');
      return undefined;
    }
  }

  // Node 20 makes AbortSignals expensive (~7 % of a run). A run that ended unaborted, with no
  // listener left on its signal, hands its controller to the next run of this agent.
  private spare: AbortController | undefined;
  private reuses = 0;
  private boundPublish: Publish | undefined;

  private takeController(): AbortController {
    const controller = this.spare ?? new AbortController();
    this.spare = undefined;
    return controller;
  }

  private keepController(controller: AbortController): void {
    if (controller.signal.aborted) return;
    // Counting listeners is slow in Node 20; a provider that leaves one behind is caught within
    // a few runs, long before the signal's listener warning (at 11).
    if (++this.reuses % LISTENER_CHECK_EVERY === 0 && getEventListeners(controller.signal, 'abort').length > 0) return;
    this.spare = controller;
  }

  private abortRun(run: RunState, reason: string): void {
    if (run.finished || run.controller.signal.aborted) return;
    run.error = reason;
    run.controller.abort(new DOMException(reason, 'AbortError'));
    // A dispatch in flight settles promptly on abort (its signals fire), and reports its calls
    // first. Anywhere else the run ends right after the caller returns: when the caller is a bus
    // subscriber, the event it is handling reaches every subscriber before `agent.finished`.
    if (this.state !== 'dispatching') queueMicrotask(() => this.send(run, 'aborted'));
  }

  private pendingEntry(callId: string, verb: string) {
    const run = this.current;
    const turn = run?.turn;
    const entry =
      run !== undefined && !run.controller.signal.aborted && this.state === 'awaitingApproval' && turn?.kind === 'calls'
        ? turn.calls.find((candidate) => candidate.call.callId === callId)
        : undefined;
    // Pending means requested: argsKey is set when `tool.approval.requested` is published.
    if (entry === undefined || entry.argsKey === undefined || entry.decision !== undefined) {
      this.config.logger.warn({ agent: this.name, callId }, `${verb} ignored: no pending approval for this call`);
      return undefined;
    }
    return entry;
  }

  private pendingResult(callId: string, verb: string) {
    const run = this.current;
    const turn = run?.turn;
    const entry =
      run !== undefined && !run.controller.signal.aborted && this.state === 'awaitingResultApproval' && turn?.kind === 'calls'
        ? turn.calls.find((candidate) => candidate.call.callId === callId)
        : undefined;
    if (entry === undefined || entry.outputHash === undefined || entry.resultDecision !== undefined) {
      this.config.logger.warn({ agent: this.name, callId }, `${verb} ignored: no result of this call waits for approval`);
      return undefined;
    }
    return entry;
  }

  /**
   * Delivers one event to the machine. Events sent while a transition runs wait in the mailbox,
   * so the machine never re-enters itself. A stage that throws never escapes: the run ends with
   * `error` and the machine starts afresh.
   */
  private step(event: AgentMachineEvent): void {
    if (this.stepping) {
      (this.mailbox ??= []).push(event);
      return;
    }
    this.stepping = true;
    try {
      for (let next: AgentMachineEvent | undefined = event; next !== undefined; next = this.mailbox?.shift()) {
        try {
          this.at = this.machine.step(this.at, next, this.context);
        } catch (error) {
          // What was queued belonged to the failed run; what its `agent.finished` subscribers
          // send (a new run) is queued after this and still taken.
          this.mailbox = undefined;
          this.onMachineError(error);
        }
      }
    } finally {
      this.stepping = false;
    }
  }

  private onMachineError(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.config.logger.error({ agent: this.name, err: error }, 'agent machine failed');
    const run = this.current;
    // Start afresh: the next run begins from idle whatever stage threw.
    this.at = this.machine.initial;
    stages.entered(this, 'failed');
    if (run !== undefined) {
      run.controller.abort();
      run.error = `internal error: ${message}`;
      this.settle(run, 'error');
    }
  }
}

const LISTENER_CHECK_EVERY = 8;

/** The machine's events carry no data: one frozen object each, shared by every agent. */
const EVENTS = Object.freeze(
  Object.fromEntries(
    (
      [
        'run', 'model.responded', 'model.failed', 'repair.settled', 'approval.settled', 'dispatch.settled', 'results.settled',
        'dispatch.failed', 'budget.exhausted', 'aborted',
      ] as const
    ).map(
      (type) => [type, Object.freeze({ type })],
    ),
  ),
) as { readonly [T in AgentMachineEvent['type']]: Readonly<Extract<AgentMachineEvent, { type: T }>> };

const STOP_AT_CLOSER: readonly string[] = Object.freeze(['</ACTION>']);

/** A refusal's reason reaches the model and the bus as text: anything else is a host bug. */
function checkReason(reason: unknown, verb: 'deny' | 'rejectResult'): asserts reason is string {
  if (typeof reason !== 'string') {
    throw new TroupeError('invalid_config', `agent.${verb}(callId, reason): reason must be a string, got ${reason === null ? 'null' : typeof reason}`);
  }
}
