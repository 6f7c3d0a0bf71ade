import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, scriptedProvider, type Envelope } from '../../src/index.js';
import { renderManifest } from '../../src/protocol/index.js';

/** A tool with a parameter named `action`, as function-calling benchmarks and MCP servers have them. */
function doorTool() {
  const seen: unknown[] = [];
  const door = defineTool({
    name: 'door',
    description: 'Open or close a door.',
    parameters: {
      type: 'object',
      properties: { action: { type: 'string', enum: ['open', 'close'] }, action_: { type: 'string' }, which: { type: 'string' } },
      required: ['action', 'which'],
    } as const,
    needsApproval: (args) => args.action === 'open',
    verbatimParams: ['action'],
    execute: (args) => (seen.push(args), `the ${args.which} door is ${args.action === 'open' ? 'open' : 'shut'}`),
  });
  return { door, seen };
}

describe('parameters named like the <ACTION> format’s tags', () => {
  it('are offered under an alias and reach the tool, its approval and the bus under their own name', async () => {
    const { door, seen } = doorTool();
    // `action_` is taken by the tool itself: the alias of `action` is `action_2`.
    expect(Object.keys(door.parameters['properties'] as object)).toEqual(['action_2', 'action_', 'which']);
    expect(door.parameters['required']).toEqual(['action_2', 'which']);
    const agent = createAgent({
      name: 'porter',
      tools: [door],
      provider: scriptedProvider(['<ACTION><door><action_2>close</action_2><which>cellar</which></door></ACTION>', 'Done.']),
    });
    const started: Envelope<'tool.started'>[] = [];
    agent.bus.on('tool.started', (event) => void started.push(event));
    const result = await agent.run('Shut the cellar.');
    expect(result.text).toBe('Done.');
    expect(seen).toEqual([{ action: 'close', which: 'cellar' }]);
    expect(started[0]!.data.args).toEqual({ action: 'close', which: 'cellar' });
    expect(agent.pendingApprovals()).toEqual([]);
  });

  it('asks for approval by the tool’s own names', async () => {
    const { door, seen } = doorTool();
    const agent = createAgent({ name: 'porter', tools: [door], provider: scriptedProvider(['<ACTION><door><action_2>open</action_2><which>gate</which></door></ACTION>', 'Open.']) });
    agent.bus.on('tool.approval.requested', (event) => void agent.approve(event.data.callId, { args: { action: 'open', which: 'gate' } }));
    const requested: unknown[] = [];
    agent.bus.on('tool.approval.requested', (event) => void requested.push(event.data.args));
    await agent.run('Open the gate.');
    expect(requested).toEqual([{ action: 'open', which: 'gate' }]);
    expect(seen).toEqual([{ action: 'open', which: 'gate' }]);
  });

  it('shows the alias in the manifest and in a correction', async () => {
    const { door } = doorTool();
    expect(renderManifest([door])).toContain('<action_2>');
    const agent = createAgent({
      name: 'porter',
      tools: [door],
      provider: scriptedProvider(['<ACTION><door><action>close</action><which>cellar</which></door></ACTION>', 'Sorry.']),
    });
    const observed: string[] = [];
    agent.bus.on('agent.observation', (event) => void observed.push(event.data.text));
    await agent.run('Shut the cellar.');
    // A bare <action> would end the block: the model is told what it wrote could not be read.
    expect(observed[0]).toMatch(/could not be read|rejected/);
  });

  it('works with native calls under the same alias', async () => {
    const { door, seen } = doorTool();
    const agent = createAgent({
      name: 'porter',
      protocol: 'native',
      tools: [door],
      provider: scriptedProvider([{ text: '', toolCalls: [{ id: 'c1', name: 'door', arguments: '{"action_2": "close", "which": "front"}' }] }, 'Done.']),
    });
    await agent.run('Shut the front door.');
    expect(seen).toEqual([{ action: 'close', which: 'front' }]);
  });
});
