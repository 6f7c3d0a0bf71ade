import type { AgentMachineContext, AgentMachineEvent } from '../../machines/agent.machine.js';
import type { FlatMachine } from './flat-machine.js';

/**
 * What steps the machine for an actor: the table compiled once for every agent (the default), or
 * an agent's own XState actor (`engine: 'xstate'`, see `xstate-engine.ts`).
 */
export type MachineStepper = Pick<FlatMachine<AgentMachineContext>, 'initial' | 'start' | 'step'> & {
  /** Stops what the stepper runs for this agent (an XState actor), when the agent is closed. */
  stop?(): void;
};

/**
 * An actor in the actor-model sense: it takes one event at a time from its mailbox and steps the
 * agent machine with it (the compiled table, or XState's interpreter), being itself the machine's
 * context. Events sent while a
 * transition runs (by a stage or a bus subscriber) wait in the mailbox and are taken in order
 * after it, so the machine never re-enters itself. A base class rather than a member object: its
 * methods live on the prototype, so an idle agent pays for a state name, not for a stepper.
 */
export abstract class MachineActor implements AgentMachineContext {
  /** The machine's own state. */
  protected at: string;
  /** Whether a step is under way: an event sent now waits in the mailbox. */
  protected stepping = false;
  private mailbox: AgentMachineEvent[] | undefined;
  protected readonly machine: MachineStepper;

  constructor(machine: MachineStepper) {
    this.machine = machine;
    // Entered by the subclass once it is built: entry actions reach the whole agent.
    this.at = machine.initial;
  }

  abstract get host(): object;

  /** What becomes of a run whose machine threw while stepping. */
  protected abstract onMachineError(error: unknown): void;

  /**
   * Delivers one event to the machine, or to the mailbox when a step is under way. A stage that
   * throws never escapes: it goes to `onMachineError`.
   */
  protected step(event: AgentMachineEvent): void {
    if (this.stepping) {
      (this.mailbox ??= []).push(event);
      return;
    }
    this.stepping = true;
    try {
      this.take(event);
      this.drain();
    } finally {
      this.stepping = false;
    }
  }

  protected drain(): void {
    for (let next = this.mailbox?.shift(); next !== undefined; next = this.mailbox?.shift()) this.take(next);
  }

  /**
   * Drops what was queued, which belonged to a failed run, and puts the machine back in its
   * initial state without entering it. What is sent from now on is queued and still taken.
   */
  protected restart(): void {
    this.mailbox = undefined;
    this.at = this.machine.initial;
  }

  private take(event: AgentMachineEvent): void {
    try {
      this.at = this.machine.step(this.at, event, this);
    } catch (error) {
      this.onMachineError(error);
    }
  }
}
