import { describe, expect, it } from 'vitest';
import { defineTool, type Provider } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

// Subscribers that act on the agent while it publishes: the UI panel that aborts, approves or
// starts the next run from inside an event handler.

function gated(name: string, needsApproval: boolean | (() => boolean)) {
  return defineTool({
    name,
    description: 'A gated call.',
    parameters: { type: 'object', properties: {} },
    needsApproval,
    execute: () => 'ran',
  });
}

describe('re-entrant hosts', () => {
  it('an abort from a tool.approval.requested subscriber ends the run cleanly, finished last', async () => {
    const tools = [
      gated('first', true),
      gated('second', () => {
        throw new Error('policy down');
      }),
    ];
    const provider = scriptedProvider(['<ACTION><first/><second/></ACTION>']);
    const { agent, events } = testAgent({ provider, tools });
    agent.bus.once('tool.approval.requested', () => agent.abort('operator left'));
    const result = await agent.run('go');
    expect(result.reason).toBe('aborted');
    expect(events.types().at(-1)).toBe('agent.finished');
    expect(events.types()).not.toContain('tool.started');
  });

  it('refuses an approval before its request is published, and publishes each request once', async () => {
    const provider = scriptedProvider(['<ACTION><first/></ACTION>', 'ok']);
    const { agent, events } = testAgent({ provider, tools: [gated('first', true)] });
    const early: boolean[] = [];
    agent.bus.on('agent.state', (event) => {
      if (event.data.to === 'awaitingApproval') early.push(agent.pendingApprovals().length === 0 && !agent.approve(`tester/1.1.1`));
    });
    agent.bus.once('tool.approval.requested', (event) => void agent.approve(event.data.callId));
    const result = await agent.run('go');
    expect(early).toEqual([true]);
    expect(result.reason).toBe('final_answer');
    expect(events.filter('tool.approval.requested')).toHaveLength(1);
    const types = events.types();
    expect(types.indexOf('tool.approval.requested')).toBeLessThan(types.indexOf('tool.approval.resolved'));
    expect(types.indexOf('tool.approval.resolved')).toBeLessThan(types.indexOf('tool.started'));
  });

  it('an abort from an agent.said subscriber stops the turn before dispatch', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([`Looking.${action(call('lookup_player', { player_id: '7' }))}`]);
    const { agent, events } = testAgent({ provider, tools });
    agent.bus.once('agent.said', () => agent.abort());
    const result = await agent.run('go');
    expect(result).toMatchObject({ reason: 'aborted', calls: [] });
    expect(executed).toEqual([]);
    expect(events.types()).not.toContain('tool.failed');
  });

  it('a provider resolving something that is not a response fails the run instead of hanging it', async () => {
    const broken: Provider = { name: 'broken', complete: async () => undefined as never };
    const { agent } = testAgent({ provider: broken });
    await expect(agent.run('go')).resolves.toMatchObject({ reason: 'error', error: expect.stringMatching(/instead of a response/) });
  });

  it('a run started from agent.finished after an internal error is taken', async () => {
    const provider = scriptedProvider([{ toolCalls: [null as never] }, 'second run answers']);
    const { agent, events } = testAgent({ provider, protocol: 'native', tools: rosterTools().tools });
    const second = new Promise((resolve) => {
      agent.bus.once('agent.finished', () => void agent.run('again').then(resolve));
    });
    const first = await agent.run('go');
    expect(first.reason).toBe('error');
    await expect(second).resolves.toMatchObject({ reason: 'final_answer', text: 'second run answers' });
    expect(events.filter('agent.state').some((event) => event.data.to === 'failed')).toBe(true);
  });

  it('agent.finished follows from the run it ends', async () => {
    const provider = scriptedProvider(['hello']);
    const { agent, events } = testAgent({ provider });
    await agent.run('go');
    expect(events.find('agent.finished')!.cause).toBe(events.find('llm.response')!.id);
  });
});
