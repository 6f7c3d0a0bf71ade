import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import { describe, expect, it, vi } from 'vitest';
import type { AnyEventObject } from 'xstate';
import { createAgent, defineTool } from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';

const look = defineTool({
  name: 'look',
  description: 'Look around.',
  parameters: { type: 'object', properties: {} },
  readOnly: true,
  execute: () => 'nothing moves',
});

describe("an agent on engine: 'xstate', in the Stately inspector", () => {
  it('shows the real machine actor: its definition, the events it takes, each snapshot and the actions it runs', async () => {
    const events: StatelyInspectionEvent[] = [];
    const actions: string[] = [];
    const inspector = createInspector({ send: (event) => void events.push(event) });
    const agent = createAgent({
      name: 'guard',
      engine: 'xstate',
      tools: [look],
      provider: scriptedProvider(['<ACTION><look/></ACTION>', 'All quiet.']),
      // Both at once: the inspector's observer, and a plain function of XState's inspection events.
      inspect: (event) => {
        inspector.inspect.next?.(event);
        if (event.type === '@xstate.action') actions.push(event.action.type);
      },
    });
    const reported: string[] = [];
    agent.bus.on('agent.state', (event) => void reported.push(event.data.to));
    await expect(agent.run('Anything out there?')).resolves.toMatchObject({ reason: 'final_answer', text: 'All quiet.' });
    await agent.close();
    // The inspector sends when the event loop is idle: wait for the actor's stop.
    await vi.waitFor(() => expect(events.some((event) => event.type === '@xstate.snapshot' && (event.snapshot as { status?: string }).status === 'stopped')).toBe(true));

    const actor = events.find((event) => event.type === '@xstate.actor') as { name: string; definition: string; sessionId: string };
    expect(actor.name).toBe('guard');
    const definition = JSON.parse(actor.definition) as { id: string; states: Record<string, unknown> };
    expect(definition.id).toBe('agent');
    expect(Object.keys(definition.states).sort()).toEqual(['idle', 'deliberating', 'parsing', 'validating', 'repairing', 'awaitingApproval', 'dispatching', 'awaitingResultApproval', 'observing', 'done', 'failed'].sort());
    const mine = events.filter((event) => event.sessionId === actor.sessionId);
    expect(mine.filter((event) => event.type === '@xstate.event').map((event) => (event.event as AnyEventObject).type)).toEqual([
      'xstate.init', 'run', 'model.responded', 'dispatch.settled', 'model.responded',
    ]);
    // One snapshot per event taken, in the state its macrostep ended in; the context holds only the agent's name.
    const snapshots = mine.filter((event) => event.type === '@xstate.snapshot').map((event) => event.snapshot as unknown as { value: string; context: unknown });
    expect(snapshots.map((snapshot) => snapshot.value)).toEqual(['idle', 'deliberating', 'dispatching', 'deliberating', 'done', 'done']);
    expect(snapshots[1]!.context).toEqual({ agent: 'guard' });
    // Every state the runtime reported was entered by XState's own actions, in the same order.
    expect(actions.filter((type) => type === 'entered')).toHaveLength(reported.length);
    expect(actions.filter((type) => type !== 'entered')).toEqual(['deliberate', 'parse', 'validate', 'dispatch', 'observe', 'deliberate', 'parse', 'finish']);
  });
});
