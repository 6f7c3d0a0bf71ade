import type { AgentStateName } from '../../machines/agent.machine.js';
import type { Bus, EventMeta, Publish } from '../bus/bus.js';
import type { RunReason } from '../bus/event-data.js';
import type { Envelope, EventType, TroupeEvents } from '../bus/events.js';
import { errorMessage, TroupeError } from '../errors.js';
import { createToolLimiters } from '../tools/acquire-slot.js';
import type { AgentConfig } from './agent-config.js';
import type { Agent, PendingApproval, PendingResultApproval, ResumeOptions, RunOptions, RunResult } from './agent-options.js';
import { approvalControls } from './approval-controls.js';
import { lazyLimit } from './lazy-limit.js';
import { commitRun, type AgentMemory, type MemoryHost } from './memory/agent-memory.js';
import { SeededRandom } from './run/seeded-random.js';
import { readSnapshot, writeSnapshot, type AgentSnapshot } from './run/agent-snapshot.js';
import { openingMessages } from './run/opening-messages.js';
import { startedData, type RunInput } from './run/run-input.js';
import { streamRun, type AgentStream, type AgentStreamOptions } from './stream/agent-stream.js';
import { followSignal, RunHandles, type RunDone } from './run/run-handles.js';
import { runResult } from './run/run-result.js';
import { newRunState, releaseRun, type RunState } from './run/run-state.js';
import { MachineActor, type MachineStepper } from './machine-actor.js';
import { EVENTS, STATE_CHANGES } from './machine-events.js';
import { continueRun } from './stages/continue-run.js';
import type { Completion, StageEvent, StagePort } from './stages/stage-port.js';

/**
 * The live agent: a `MachineActor` whose behaviour is the agent statechart, compiled once for all
 * agents (or, with `engine: 'xstate'`, run by an XState actor of its own). It owns the current run's state and its live handles, and is the port through which the
 * stages publish, report and wait. Methods live on the prototype, and an idle agent holds little
 * more than the name of its state, so ten thousand agents stay cheap.
 */
export class AgentRuntime extends MachineActor implements Agent, StagePort {
  readonly config: AgentConfig;
  /** The state last published in `agent.state`. */
  state: AgentStateName = 'idle';
  /** The run in progress, as plain data. */
  current: RunState | undefined;
  private handles: RunHandles | undefined;
  private runs = 0;
  private closed = false;
  /** Reused for every event this agent publishes: the bus copies what it needs. */
  private readonly meta: EventMeta;
  private boundPublish: Publish | undefined;
  private ownLimiters: ReturnType<StagePort['limiters']> | undefined;
  private generator: SeededRandom | undefined;

  constructor(config: AgentConfig, machine: MachineStepper) {
    super(machine);
    this.config = config;
    // Every field in the literal: `cause`, set per event, would otherwise need a property store of its own.
    this.meta = { agent: config.name, scene: config.scene, cause: undefined };
    this.at = machine.start(this);
    this.publish('agent.spawned', { name: config.name, tools: config.registry.names(), protocol: config.protocol });
  }

  get name(): string {
    return this.config.name;
  }

  /** The machine's context is the agent itself (its `host`): no context object per agent. */
  override get host(): this {
    return this;
  }

  get bus(): Bus {
    return this.config.bus;
  }

  get memory(): AgentMemory | undefined {
    return this.config.memory;
  }

  run(input: RunInput, options: RunOptions = {}): Promise<RunResult> {
    return new Promise<RunResult>((resolve, reject) => {
      try {
        this.runWith(input, options, resolve);
      } catch (error) {
        reject(error);
      }
    });
  }

  stream(input: RunInput, options?: AgentStreamOptions): AgentStream {
    return streamRun(this, input, options);
  }

  /**
   * `run` with a callback: `done` is called once with the result and the agent's name,
   * synchronously when the whole run could finish at once (a scripted brain whose tools all
   * answered at once). Scenes use it to run a tick of such turns without a hop through the
   * microtask queue per turn, with one callback for all their agents. Throws the host errors
   * `run` rejects with.
   */
  runWith(input: RunInput, options: RunOptions, done: RunDone): void {
    this.assertFree('run');
    const messages = openingMessages(this.config, input, options);
    this.config.memory?.begin(messages);
    const run = newRunState(++this.runs, messages, this.now());
    if (options.rounds !== undefined) run.roundLimit = options.rounds;
    if (options.cause !== undefined) run.cause = options.cause;
    this.begin(run, done, options.signal);
    // What a log needs to run it again (resumeAgent); a scene's turns are announced by the scene.
    if (this.config.scene === undefined) this.announce(run, input, options);
    this.step(EVENTS.run);
  }

  pendingApprovals(): PendingApproval[] {
    return approvalControls.pendingCalls(this.current, this.state);
  }

  approve(callId: string, options: { args?: TroupeEvents['tool.started']['args']; argsHash?: string } = {}): boolean {
    return approvalControls.approve(this.controlled(), callId, options);
  }

  deny(callId: string, reason = 'denied by the operator'): boolean {
    return approvalControls.deny(this.controlled(), callId, reason);
  }

  pendingResultApprovals(): PendingResultApproval[] {
    return approvalControls.pendingResults(this.current, this.state);
  }

  approveResult(callId: string, options: { outputHash?: string } = {}): boolean {
    return approvalControls.approveResult(this.controlled(), callId, options);
  }

  rejectResult(callId: string, reason = 'rejected by the operator'): boolean {
    return approvalControls.rejectResult(this.controlled(), callId, reason);
  }

  /** Publishes again the approval requests still waiting (a resume going on live after a crash). */
  requestApprovalsAgain(): number {
    return approvalControls.requestAgain(this.controlled());
  }

  abort(reason = 'aborted'): void {
    const run = this.current;
    const handles = this.handles;
    if (run === undefined || handles === undefined || run.finished || handles.aborted) return;
    run.error = reason;
    handles.abort(new DOMException(reason, 'AbortError'));
    // A dispatch in flight settles promptly on abort (its signals fire), and reports its calls
    // first. Anywhere else the run ends right after the caller returns: when the caller is a bus
    // subscriber, the event it is handling reaches every subscriber before `agent.finished`.
    if (this.state !== 'dispatching') queueMicrotask(() => this.complete(run, endAborted, undefined, 'report'));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.abort('agent closed');
    this.closed = true;
    this.machine.stop?.();
    this.config.memory?.close();
    if (this.config.ownsLog) await this.config.log?.close();
  }

  snapshot(): AgentSnapshot {
    if (this.stepping) {
      throw new TroupeError('agent_busy', `agent "${this.name}" is in the middle of a step; take its snapshot between steps (a timer, a microtask, an await), not from a bus subscriber`);
    }
    return writeSnapshot(this.name, {
      state: this.at as AgentStateName,
      runs: this.runs,
      run: this.current,
      memory: this.config.memory?.snapshot(),
      random: this.generator?.state(),
      budgets: this.config.budgets.map((budget) => budget.snapshot()),
    });
  }

  resume(snapshot: AgentSnapshot, options: ResumeOptions = {}): Promise<RunResult | undefined> {
    this.assertFree('resume');
    const parts = readSnapshot(this.name, snapshot);
    if (parts.memory !== undefined && this.config.memory === undefined) {
      throw new TroupeError('invalid_config', `agent "${this.name}": the snapshot has a memory, and this agent has no \`memory\` option`);
    }
    this.runs = parts.runs;
    if (parts.memory !== undefined) this.config.memory!.restore(parts.memory);
    if (parts.random !== undefined) this.generator = new SeededRandom(undefined, parts.random);
    for (const budget of this.config.budgets) {
      const saved = parts.budgets.find((candidate) => candidate.name === budget.name);
      if (saved !== undefined) budget.restore(saved);
    }
    this.at = parts.state;
    this.state = parts.state;
    const run = parts.run;
    if (run === undefined) return Promise.resolve(undefined);
    return new Promise<RunResult>((resolve) => {
      this.begin(run, resolve, options.signal);
      this.stepping = true;
      try {
        try {
          continueRun(parts.state, run, this.config, this, options.requestAgain === true);
        } catch (error) {
          this.onMachineError(error);
        }
        this.drain();
      } finally {
        this.stepping = false;
      }
    });
  }

  // The port the stages use.

  /** Publishes on the bus as this agent, following the run's cause chain. */
  publish<K extends EventType>(type: K, data: TroupeEvents[K], cause?: string): Envelope<K> {
    const { meta } = this;
    meta.cause = cause ?? this.current?.cause;
    const envelope = this.config.bus.publish(type, data, meta);
    // Hold no id between runs: an idle agent keeps nothing of its last turn alive.
    meta.cause = undefined;
    return envelope;
  }

  get publisher(): Publish {
    return (this.boundPublish ??= (type, data) => this.publish(type, data));
  }

  send(event: StageEvent): void {
    if (this.current !== undefined && !this.current.finished) this.step(EVENTS[event]);
  }

  // No default parameter values here or in the model call: they would give the function body a
  // scope of its own, and every wait a second closure context (80 bytes a parked agent).
  wait<T>(work: T | Promise<T>, then: Completion<T>, failed: Completion<unknown>, abort?: 'drop' | 'report'): void {
    const run = this.current!;
    // Work that is done already (a scripted brain's reply, tools that answered at once) goes on in
    // this same step, with no hop through the microtask queue.
    if (!(work instanceof Promise)) return this.complete(run, then, work, abort);
    work.then(
      (value: T) => this.complete(run, then, value, abort),
      (error: unknown) => this.complete(run, failed, error, abort),
    );
  }

  defer(then: () => StageEvent | undefined): void {
    const run = this.current!;
    queueMicrotask(() => this.complete(run, callDeferred, then, 'regardless'));
  }

  get signal(): AbortSignal {
    return this.handles!.signal();
  }

  get aborted(): boolean {
    return this.handles!.aborted;
  }

  get abortFlag(): RunHandles {
    return this.handles!;
  }

  now(): number {
    return this.config.bus.clock();
  }

  random(): number {
    // Made on first use: most agents of a crowd never draw.
    return (this.generator ??= new SeededRandom(this.config.seed)).next();
  }

  limiters(): ReturnType<StagePort['limiters']> {
    // Made at the first dispatch: an agent that never calls a tool never pays for them.
    return (this.ownLimiters ??= {
      limiter: this.config.limiter ?? lazyLimit(this.config.concurrency),
      toolLimiters: this.config.toolLimiters ?? createToolLimiters(),
    });
  }

  // The machine's bookkeeping, called by its provided actions.

  /** Publishes `agent.state` for the state just entered. */
  entered(state: AgentStateName): void {
    const from = this.state;
    this.state = state;
    if (from !== state) this.publish('agent.state', STATE_CHANGES[from][state]);
  }

  /** Ends the run once: publishes `agent.finished` and resolves `run()`. */
  finishRun(run: RunState, reason: RunReason): void {
    if (run.finished) return;
    run.finished = true;
    const handles = this.handles!;
    handles.release();
    if (this.current === run) {
      this.current = undefined;
      this.handles = undefined;
    }
    const { result, data } = runResult(run, reason, this.now());
    // The run joins the kept history before `agent.finished`, so a run started from a subscriber sees it.
    const compacting = this.config.memory === undefined ? undefined : commitRun(this.config.memory, run, this.memoryHost());
    this.publish('agent.finished', data, run.cause);
    // An async compaction policy (a summarizing model) finishes before the run resolves.
    if (compacting === undefined) {
      handles.resolve(result, this.name);
      return releaseRun(run);
    }
    // Resolves whatever became of the compaction: a policy or counter that throws must not hang run().
    const resolve = (): void => {
      handles.resolve(result, this.name);
      releaseRun(run);
    };
    compacting.then(resolve, (error: unknown) => {
      this.config.logger.error({ agent: this.name, err: error }, 'memory compaction failed');
      resolve();
    });
  }

  private memoryHost(): MemoryHost {
    return { name: this.name, logger: this.config.logger, budgets: this.config.budgets, prices: this.config.prices, publish: (type, data, cause) => this.publish(type, data, cause) };
  }

  private assertFree(verb: 'run' | 'resume'): void {
    if (this.closed) throw new TroupeError('invalid_config', `agent "${this.name}" is closed`);
    if (this.current !== undefined) {
      throw new TroupeError('agent_busy', `agent "${this.name}" is already running; await its run or abort it first (agent.${verb})`);
    }
  }

  /** Makes `run` the current run, with a signal that the caller's `signal` aborts. */
  private begin(run: RunState, resolve: RunDone, external: AbortSignal | undefined): void {
    const handles = new RunHandles(resolve);
    this.current = run;
    this.handles = handles;
    followSignal(handles, run, external, this);
  }

  private announce(run: RunState, input: RunInput, options: RunOptions): void {
    const data = startedData(input, run.number);
    if (options.rounds !== undefined) data.rounds = options.rounds;
    if (options.images !== undefined && options.images.length > 0) data.images = options.images.length;
    this.publish('run.started', data);
  }

  /** What the approval controls need of the agent. */
  private controlled(): Parameters<typeof approvalControls.approve>[0] {
    return { run: this.current, state: this.state, aborted: this.handles?.aborted ?? true, port: this, logger: this.config.logger, agent: this.name };
  }

  /**
   * The one place where asynchronous work comes back (model replies, dispatches, hooks, deferred
   * announcements, the end of an aborted run): work of a run that has ended is dropped, and work
   * of an aborted run is dropped, or applied and ends the run `aborted` ('report'), or applied as
   * if nothing happened ('regardless': what it sends is still refused once the run has ended).
   */
  private complete<T>(run: RunState, apply: Completion<T>, value: T, abort: 'drop' | 'report' | 'regardless' | undefined): void {
    if (this.current !== run || run.finished) return;
    const aborted = abort !== 'regardless' && this.handles!.aborted;
    if (aborted && abort !== 'report') return;
    const event = apply(value, run, this.config, this);
    if (event !== undefined) this.step(EVENTS[aborted ? 'aborted' : event]);
  }

  /** A stage threw: the run ends with `error`, and the next run begins from idle whatever stage threw. */
  protected override onMachineError(error: unknown): void {
    // What its `agent.finished` subscribers send (a new run) is queued after this and still taken.
    this.restart();
    this.config.logger.error({ agent: this.name, err: error }, 'agent machine failed');
    const run = this.current;
    this.entered('failed');
    if (run !== undefined) {
      this.handles?.abort();
      run.error = `internal error: ${errorMessage(error)}`;
      this.finishRun(run, 'error');
    }
  }
}

/** A deferred stage step, run through `complete`. */
const callDeferred: Completion<() => StageEvent | undefined> = (then) => then();

/** The end of a run aborted outside a dispatch (which reports its own calls first). */
const endAborted: Completion<undefined> = () => 'aborted';
