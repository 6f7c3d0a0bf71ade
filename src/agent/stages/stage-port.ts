import type { LimitFunction } from 'p-limit';
import type { AgentMachineEvent, AgentStateName } from '../../../machines/agent.machine.js';
import type { Publish } from '../../bus/bus.js';
import type { Envelope, EventType, TroupeEvents } from '../../bus/events.js';
import type { SignalSource } from '../../llm/request-signal.js';
import type { ToolLimiters } from '../../tools/acquire-slot.js';
import type { AgentConfig } from '../agent-config.js';
import type { RunState } from '../run/run-state.js';

/** An event a stage reports to the machine. */
export type StageEvent = Exclude<AgentMachineEvent['type'], 'run'>;

/**
 * What to do once a stage's work is done: record its value (or error) on the run and name the event
 * to send. Handed the run, the config and the port, so that it can be a plain function rather
 * than a closure made for every wait.
 */
export type Completion<T> = (value: T, run: RunState, config: AgentConfig, port: StagePort) => StageEvent | undefined;

/**
 * What a stage may do beyond reading the run's state and the config: the runtime that steps the
 * machine implements it. A stage reaches nothing else of its agent, so a test can call a stage with
 * a literal run state and a fake port.
 */
export type StagePort = {
  /** Publishes as the agent; the event follows from `run.cause` unless another cause is given. */
  publish<K extends EventType>(type: K, data: TroupeEvents[K], cause?: string): Envelope<K>;
  /** `publish` as a function value, for work that publishes on the agent's behalf (model calls, the dispatcher). */
  readonly publisher: Publish;
  /** The machine's current state. */
  readonly state: AgentStateName;
  /** Reports an event for the current run to the machine (taken once the current step is over). */
  send(event: StageEvent): void;
  /**
   * Waits for a stage's asynchronous work: the only place where work that outlives its step comes
   * back. `then` (or `failed`) records what came of the work and names the event to send; it is
   * not called when the run has ended meanwhile. When the run was aborted, `abort` says what
   * happens: `drop` forgets the work (the abort ends the run by itself), `report` lets `then`
   * record it and ends the run `aborted` (a dispatch, whose calls did run).
   */
  wait<T>(work: T | Promise<T>, then: Completion<T>, failed: Completion<unknown>, abort?: 'drop' | 'report'): void;
  /** Runs `then` once the caller has returned (after the current step and its subscribers), unless the run ended. */
  defer(then: () => StageEvent | undefined): void;
  /** The current run's abort signal. */
  readonly signal: AbortSignal;
  /** Whether the current run was aborted: `signal.aborted`, without reading the signal (see `RunHandles`). */
  readonly aborted: boolean;
  /**
   * The current run's abort, kept with that run for work that may outlive it: `aborted` without
   * making the signal, and `signal()`, which makes it on first use (see `RunHandles`).
   */
  readonly abortFlag: SignalSource;
  /** The bus clock: event times and durations. */
  now(): number;
  /** The agent's seeded generator: uniform in [0, 1). The port itself is handed on as a source of randomness. */
  random(): number;
  /** The tool limiters of this agent (its own, made on first use, or those its scene shares). */
  limiters(): { limiter: LimitFunction; toolLimiters: ToolLimiters };
};
