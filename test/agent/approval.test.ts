import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defineTool, type Agent } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

const requested = (agent: Agent) => new Promise<void>((resolve) => agent.bus.once('tool.approval.requested', () => resolve()));

function gatedSetup(needsApproval: boolean | ((args: Record<string, unknown>) => boolean | Promise<boolean>)) {
  const executed: string[] = [];
  const transfer = defineTool({
    name: 'transfer',
    description: 'Move gold between players.',
    parameters: {
      type: 'object',
      properties: { to: { type: 'string', maxLength: 16 }, amount: { type: 'integer', minimum: 1 } },
      required: ['to', 'amount'],
      additionalProperties: false,
    },
    needsApproval,
    execute: ({ to, amount }) => {
      executed.push(`${String(to)}:${String(amount)}`);
      return 'sent';
    },
  });
  const provider = scriptedProvider([
    action(call('transfer', { to: 'ana', amount: '500' })),
    'Done.',
  ]);
  const { agent, events } = testAgent({ provider, tools: [transfer, ...rosterTools().tools] });
  return { agent, events, executed, provider };
}

describe('approval', () => {
  it('parks the agent until approved, then runs the call', async () => {
    const { agent, events, executed } = gatedSetup(true);
    const asked = requested(agent);
    const running = agent.run('Pay Ana 500.');
    await asked;
    expect(agent.state).toBe('awaitingApproval');
    expect(events.types()).not.toContain('tool.started');
    const [pending] = agent.pendingApprovals();
    expect(pending).toMatchObject({ name: 'transfer', args: { to: 'ana', amount: 500 } });
    expect(agent.approve(pending!.callId)).toBe(true);
    const result = await running;
    expect(result.reason).toBe('final_answer');
    expect(executed).toEqual(['ana:500']);
    expect(events.find('tool.approval.resolved')!.data).toMatchObject({ approved: true });
  });

  it('reports a denial to the model as denied, nothing runs', async () => {
    const { agent, events, executed } = gatedSetup(true);
    const asked = requested(agent);
    const running = agent.run('Pay Ana 500.');
    await asked;
    const callId = agent.pendingApprovals()[0]!.callId;
    expect(agent.deny(callId, 'too much gold')).toBe(true);
    await running;
    expect(executed).toEqual([]);
    expect(events.find('tool.rejected')!.data).toMatchObject({ code: 'denied', message: 'too much gold' });
    expect(events.find('agent.observation')!.data.text).toMatch(/denied.*too much gold/);
  });

  it('asks only when the predicate says so', async () => {
    const { agent, events, executed } = gatedSetup((args) => (args.amount as number) > 1000);
    const result = await agent.run('Pay Ana 500.');
    expect(result.reason).toBe('final_answer');
    expect(executed).toEqual(['ana:500']);
    expect(events.types()).not.toContain('tool.approval.requested');
  });

  it('waits for an async predicate', async () => {
    const { agent, events } = gatedSetup(async () => true);
    const asked = requested(agent);
    const running = agent.run('Pay Ana 500.');
    await asked;
    agent.approve(agent.pendingApprovals()[0]!.callId);
    await expect(running).resolves.toMatchObject({ reason: 'final_answer' });
  });

  it('fails closed when the predicate throws', async () => {
    const { agent, events, executed } = gatedSetup(() => {
      throw new Error('policy service down');
    });
    await agent.run('Pay Ana 500.');
    expect(executed).toEqual([]);
    expect(events.find('tool.rejected')!.data).toMatchObject({ code: 'denied' });
    expect(events.find('tool.rejected')!.data.message).toMatch(/policy service down/);
  });

  it('ignores an approval that arrives after abort', async () => {
    const { agent, events, executed } = gatedSetup(true);
    const asked = requested(agent);
    const running = agent.run('Pay Ana 500.');
    await asked;
    const callId = agent.pendingApprovals()[0]!.callId;
    agent.abort('operator left');
    expect(agent.approve(callId)).toBe(false);
    const result = await running;
    expect(result.reason).toBe('aborted');
    expect(executed).toEqual([]);
    expect(events.types()).not.toContain('tool.started');
  });

  it('refuses an approval bound to different arguments', async () => {
    const { agent, events, executed } = gatedSetup(true);
    const asked = requested(agent);
    const running = agent.run('Pay Ana 500.');
    await asked;
    const callId = agent.pendingApprovals()[0]!.callId;
    expect(agent.approve(callId, { args: { to: 'ana', amount: 5000 } })).toBe(false);
    expect(agent.approve('no-such-call')).toBe(false);
    expect(agent.approve(callId, { args: { amount: 500, to: 'ana' } })).toBe(true);
    await running;
    expect(executed).toEqual(['ana:500']);
  });

  it('binds an approval to the argsHash of the request (SHA-256 of the stable key): another hash is refused', async () => {
    const { agent, events, executed } = gatedSetup(true);
    const asked = requested(agent);
    const running = agent.run('Pay Ana 500.');
    await asked;
    const { callId, argsHash } = events.find('tool.approval.requested')!.data;
    const expected = createHash('sha256').update('{"amount":500,"to":"ana"}').digest('hex');
    expect(argsHash).toBe(expected);
    expect(agent.pendingApprovals()).toEqual([{ callId, name: 'transfer', args: { to: 'ana', amount: 500 }, argsHash: expected }]);
    expect(agent.approve(callId, { argsHash: '0'.repeat(64) })).toBe(false);
    expect(agent.approve(callId, { args: { to: 'ana', amount: 500 }, argsHash: '0'.repeat(64) })).toBe(false);
    expect(executed).toEqual([]);
    expect(agent.approve(callId, { argsHash })).toBe(true);
    await running;
    expect(executed).toEqual(['ana:500']);
  });

  it('deny and rejectResult take a string reason: anything else is a host error, thrown, and decides nothing', async () => {
    const { agent, executed } = gatedSetup(true);
    const asked = requested(agent);
    const running = agent.run('Pay Ana 500.');
    await asked;
    const callId = agent.pendingApprovals()[0]!.callId;
    for (const reason of [42, { why: 'no' }, null]) {
      expect(() => agent.deny(callId, reason as unknown as string)).toThrow(expect.objectContaining({ name: 'TroupeError', code: 'invalid_config', message: expect.stringContaining('reason must be a string') }));
      expect(() => agent.rejectResult(callId, reason as unknown as string)).toThrow(expect.objectContaining({ name: 'TroupeError', message: expect.stringContaining('reason must be a string') }));
    }
    expect(agent.state).toBe('awaitingApproval');
    expect(agent.deny(callId, 'too much')).toBe(true);
    await running;
    expect(executed).toEqual([]);
  });

  it('runs a turn with a gated call in model order', async () => {
    const order: string[] = [];
    const gated = defineTool({
      name: 'gated_read',
      description: 'A read that needs approval.',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      needsApproval: true,
      execute: async () => void order.push('gated'),
    });
    const free = defineTool({
      name: 'free_read',
      description: 'A read.',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      execute: async () => void order.push('free'),
    });
    const provider = scriptedProvider(['<ACTION><gated_read/><free_read/></ACTION>', 'ok']);
    const { agent, events } = testAgent({ provider, tools: [gated, free] });
    const asked = requested(agent);
    const running = agent.run('go');
    await asked;
    agent.approve(agent.pendingApprovals()[0]!.callId);
    await running;
    expect(order).toEqual(['gated', 'free']);
  });
});
