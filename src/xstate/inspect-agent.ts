import type { AnyEventObject, InspectionEvent, Snapshot } from 'xstate';
import { agentMachine } from '../../machines/agent.machine.js';
import type { Agent } from '../agent/agent-options.js';
import type { AgentInspect } from '../agent/xstate-engine.js';
import type { Envelope } from '../bus/events.js';

/** What an inspected agent shows as its actor's snapshot. */
type InspectedSnapshot = { status: 'active' | 'done' | 'error'; value: string; context: { agent: string; run: number; lastEvent: string | undefined } };

/**
 * Reports an agent to an XState inspector as an actor whose logic is the agent's statechart:
 * `@xstate.actor` at once, then an `@xstate.event` for each event of the agent's bus and an
 * `@xstate.snapshot` for each change of state. Pass the `inspect` observer of
 * `@statelyai/inspect` (`createBrowserInspector().inspect`, `createWebSocketInspector(...).inspect`)
 * or of any tool that reads XState's inspection events, and the statechart shows with the agent's
 * state lit. Agents made by `agentLogic` inside an XState system are inspected by that system
 * already. Returns a function that stops the reports.
 *
 * @example
 * const stop = inspectAgent(agent, createWebSocketInspector({ url: 'ws://localhost:8080' }).inspect);
 */
export function inspectAgent(agent: Agent, inspect: AgentInspect): () => void {
  const next = typeof inspect === 'function' ? inspect : (event: InspectionEvent) => inspect.next?.(event);
  let run = 0;
  let lastEvent: string | undefined;
  let snapshot: InspectedSnapshot = { status: 'active', value: agent.state, context: { agent: agent.name, run, lastEvent } };
  // An actor reference as the inspector reads one: an id, a session, the logic it draws, a snapshot.
  const actorRef = {
    id: agent.name,
    sessionId: `troupe:${agent.name}`,
    logic: agentMachine,
    src: agentMachine,
    _parent: undefined,
    system: undefined,
    getSnapshot: () => snapshot,
  } as unknown as InspectionEvent['actorRef'];
  const base = { actorRef, rootId: actorRef.sessionId };
  next({ ...base, type: '@xstate.actor' });
  return agent.bus.on('*', (envelope: Envelope) => {
    const event = { type: envelope.type, ...(envelope.data as object) } as AnyEventObject;
    lastEvent = envelope.type;
    if (envelope.type === 'run.started') run = envelope.data.number;
    next({ ...base, type: '@xstate.event', event, sourceRef: undefined });
    if (envelope.type === 'agent.state') {
      const to = envelope.data.to;
      snapshot = { status: to === 'failed' ? 'error' : 'active', value: to, context: { agent: agent.name, run, lastEvent } };
      next({ ...base, type: '@xstate.snapshot', event, snapshot: snapshot as unknown as Snapshot<unknown> });
    }
  });
}
