import type { ActorLogic, ActorRefFrom, ActorSystem, AnyActorRef, Snapshot } from 'xstate';
import type { AgentStateName } from '../../machines/agent.machine.js';
import type { Agent, AgentOptions, PendingApproval, RunResult } from '../agent/agent-options.js';
import { createAgent } from '../agent/create-agent.js';
import type { Args } from '../bus/event-data.js';
import type { Envelope, Pattern } from '../bus/events.js';
import { patternMatcher } from '../bus/pattern-match.js';

/** What an agent actor is given when spawned or invoked: an input makes it a one-run actor. */
export type AgentActorInput = { input: string; rounds?: number } | undefined;

/** The events an agent actor takes: the `Agent` methods, as events. */
export type AgentActorEvent =
  | { type: 'run'; input: string; rounds?: number }
  | { type: 'approve'; callId: string; args?: Args; argsHash?: string }
  | { type: 'deny'; callId: string; reason?: string }
  | { type: 'approveResult'; callId: string; outputHash?: string }
  | { type: 'rejectResult'; callId: string; reason?: string }
  | { type: 'abort'; reason?: string };

/** What the actor's snapshot holds besides its status. */
export type AgentActorContext = {
  /** The agent's name. */
  agent: string;
  /** The state of the agent's statechart. */
  state: AgentStateName;
  /** Whether a run is in progress. */
  running: boolean;
  /** Calls parked for approval now. */
  pendingApprovals: PendingApproval[];
  /** The last run's result. */
  lastResult: RunResult | undefined;
  /** Why the last `run` event was refused (one was already in progress), if it was. */
  refused: string | undefined;
};

/** The snapshot of an agent actor; `output` is the run's result once a one-run actor is done. */
export type AgentActorSnapshot = Snapshot<RunResult> & { context: AgentActorContext; input: AgentActorInput };

/** Internal events: what the agent's bus told the actor, sent to itself. */
type Internal =
  | { type: 'troupe.state'; state: AgentStateName }
  | { type: 'troupe.approvals' }
  | { type: 'troupe.finished'; result: RunResult }
  | { type: 'troupe.failed'; error: unknown }
  | { type: 'xstate.stop' };

/** The actor logic of a troupe agent. */
export type AgentActorLogic = ActorLogic<AgentActorSnapshot, AgentActorEvent, AgentActorInput, ActorSystem<any>, Envelope>;

/** An agent actor, as `createActor(agentLogic(...))` or a parent's `spawn` returns it. */
export type AgentActorRef = ActorRefFrom<AgentActorLogic>;

/** Options of `agentLogic` beside the agent's own. */
export type AgentLogicOptions = {
  /**
   * Bus events sent to the parent actor as they happen (exact types, `prefix.*` or `*`); none by
   * default. Every bus event is also emitted, for `actor.on(type, …)`.
   */
  toParent?: readonly Pattern[];
};

type Live = { agent: Agent; stop: () => void; owned: boolean };

/** The agent behind each running actor: actor logic is shared by every actor made from it. */
const live = new WeakMap<AnyActorRef, Live>();

/**
 * Actor logic for XState v5 that makes and drives a troupe agent, so a parent machine can `spawn`
 * or `invoke` it. Given an input (`{ input: 'Who is 7?' }`), the actor runs once and is done with
 * the run's result as its output (`onDone` in an `invoke`); without one it stays active and runs
 * on each `run` event. It takes `approve`, `deny`, `approveResult`, `rejectResult` and `abort`
 * events, emits every event of the agent's bus, sends those matching `toParent` to its parent, and
 * keeps the agent's state and pending approvals in its snapshot's `context`. Stopping the actor
 * aborts the run and closes an agent it made.
 *
 * `agent` is the agent's options (a new agent for each actor) or a function that makes one from
 * the actor's input.
 *
 * @example
 * const npc = createActor(agentLogic({ name: 'guard', tools, provider }), { input: { input: 'Someone approaches.' } });
 * npc.subscribe((snapshot) => console.log(snapshot.context.state));
 * npc.start();
 */
export function agentLogic(agent: AgentOptions | ((input: AgentActorInput) => Agent), options: AgentLogicOptions = {}): AgentActorLogic {
  const forward = options.toParent === undefined || options.toParent.length === 0 ? undefined : patternMatcher(options.toParent);
  const make = (input: AgentActorInput): Live => (typeof agent === 'function' ? { agent: agent(input), stop: noop, owned: false } : { agent: createAgent(agent), stop: noop, owned: true });
  const begin = (self: AnyActorRef, running: Live, input: string, rounds: number | undefined): void => {
    let result: Promise<RunResult>;
    try {
      result = running.agent.run(input, rounds === undefined ? {} : { rounds });
    } catch (error) {
      // A closed agent, or a run already in progress, throws at once.
      result = Promise.reject(error);
    }
    result.then(
      (result) => self.send({ type: 'troupe.finished', result } satisfies Internal),
      (error: unknown) => self.send({ type: 'troupe.failed', error } satisfies Internal),
    );
  };

  return {
    config: agent,
    getInitialSnapshot: (_scope, input) => ({
      status: 'active',
      output: undefined,
      error: undefined,
      input,
      context: { agent: typeof agent === 'function' ? '' : agent.name, state: 'idle', running: input !== undefined, pendingApprovals: [], lastResult: undefined, refused: undefined },
    }),
    start: (snapshot, { self: actor, emit }) => {
      if (snapshot.status !== 'active') return;
      // Internal events go through the same mailbox as the public ones, typed apart.
      const self = actor as AnyActorRef;
      const running = make(snapshot.input);
      live.set(self, running);
      running.stop = running.agent.bus.on('*', (event: Envelope) => {
        emit(event);
        if (forward !== undefined && forward(event.type)) self._parent?.send(event);
        if (event.type === 'agent.state') self.send({ type: 'troupe.state', state: event.data.to } satisfies Internal);
        else if (event.type === 'tool.approval.requested' || event.type === 'tool.approval.resolved') self.send({ type: 'troupe.approvals' } satisfies Internal);
      });
      if (snapshot.input !== undefined) begin(self, running, snapshot.input.input, snapshot.input.rounds);
    },
    transition: (snapshot, received, { self }) => {
      const event = received as AgentActorEvent | Internal;
      const running = live.get(self);
      if (snapshot.status !== 'active' || running === undefined) return snapshot;
      const { agent: current } = running;
      const context = snapshot.context.agent === current.name ? snapshot.context : { ...snapshot.context, agent: current.name };
      switch (event.type) {
        case 'troupe.state':
          return { ...snapshot, context: { ...context, state: event.state } };
        case 'troupe.approvals':
          return { ...snapshot, context: { ...context, pendingApprovals: current.pendingApprovals() } };
        case 'troupe.finished': {
          const next = { ...snapshot, context: { ...context, running: false, lastResult: event.result, pendingApprovals: [] } };
          // A one-run actor is done with its run; a long-lived one waits for the next `run`.
          if (snapshot.input === undefined) return next;
          finish(self, running);
          return { ...next, status: 'done', output: event.result };
        }
        case 'troupe.failed':
          finish(self, running);
          return { ...snapshot, context: { ...context, running: false }, status: 'error', error: event.error };
        case 'run':
          if (context.running) return { ...snapshot, context: { ...context, refused: `agent "${current.name}" is already running: the run event for "${event.input}" was refused` } };
          begin(self, running, event.input, event.rounds);
          return { ...snapshot, context: { ...context, running: true, refused: undefined } };
        case 'approve':
          current.approve(event.callId, { ...(event.args !== undefined && { args: event.args }), ...(event.argsHash !== undefined && { argsHash: event.argsHash }) });
          return snapshot;
        case 'deny':
          current.deny(event.callId, event.reason);
          return snapshot;
        case 'approveResult':
          current.approveResult(event.callId, event.outputHash === undefined ? {} : { outputHash: event.outputHash });
          return snapshot;
        case 'rejectResult':
          current.rejectResult(event.callId, event.reason);
          return snapshot;
        case 'abort':
          current.abort(event.reason);
          return snapshot;
        case 'xstate.stop':
          current.abort('the actor was stopped');
          finish(self, running);
          return { ...snapshot, status: 'stopped' };
        default:
          return snapshot;
      }
    },
    getPersistedSnapshot: (snapshot) => snapshot,
  };
}

/** Lets go of the agent: no more bus events reach the actor, and an agent it made is closed. */
function finish(self: AnyActorRef, running: Live): void {
  running.stop();
  live.delete(self);
  if (running.owned) void running.agent.close();
}

function noop(): void {}
