import { describe, expect, it } from 'vitest';
import { repairWithModel, type RepairContext, type RepairFunction } from '../../src/index.js';
import { type CallRejection } from '../../src/bus/index.js';
import { deferred, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

/** Renames an unknown tool to the suggested one, keeping the arguments: a deterministic fixup. */
const renameToSuggestion: RepairFunction = (rejection, context) =>
  rejection.code === 'unknown_tool' && rejection.suggestion !== undefined ? { name: rejection.suggestion, args: context.call.args } : undefined;

describe('repair', () => {
  it('fixes a rejected XML call before the model hears of it; the fix runs and is on the bus', async () => {
    const { tools, executed } = rosterTools();
    const seen: { rejection: CallRejection; call: RepairContext['call']; tools: string[] }[] = [];
    const provider = scriptedProvider([action(call('lookup_playr', { player_id: '7' })), 'Ana.']);
    const { agent, events } = testAgent({
      provider,
      tools,
      repair: (rejection, context) => {
        seen.push({ rejection, call: context.call, tools: context.tools.map((tool) => tool.name) });
        return renameToSuggestion(rejection, context);
      },
    });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('final_answer');
    expect(executed).toEqual(['lookup_player:7']);
    expect(seen).toEqual([
      {
        rejection: expect.objectContaining({ code: 'unknown_tool', suggestion: 'lookup_player' }),
        call: { callId: 'tester/1.1.1', name: 'lookup_playr', format: 'xml', args: { player_id: '7' } },
        tools: ['lookup_player', 'set_team'],
      },
    ]);
    const types = events.types();
    const order = ['tool.rejected', 'tool.repaired', 'action.parsed', 'tool.started'].map((type) => types.indexOf(type as never));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(events.find('tool.repaired')!.data).toEqual({
      callId: 'tester/1.1.1',
      name: 'lookup_playr',
      before: { name: 'lookup_playr', args: { player_id: '7' } },
      after: { name: 'lookup_player', args: { player_id: '7' } },
      by: 'function',
      issues: [expect.objectContaining({ category: 'unknown_tool' })],
    });
    expect(events.all.filter((event) => event.type === 'agent.state').map((event) => (event.data as { to: string }).to)).toContain('repairing');
    // The model learns what was fixed, and the turn counts as a good one.
    const observation = events.find('agent.observation')!.data;
    expect(observation.ok).toBe(true);
    expect(observation.text).toMatch(/lookup_playr \(tester\/1\.1\.1\) was rejected .* repaired before it ran as lookup_player/);
    expect(result.stats).toMatchObject({ repairs: 1, corrections: 0, calls: 1 });
    expect(events.find('agent.finished')!.data.stats.repairs).toBe(1);
  });

  it('fixes a native call; the tool message names the fix', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([
      { toolCalls: [{ id: 'c1', name: 'set_team', arguments: '{"player_id": "7", "team": "Blue"}' }] },
      'Moved.',
    ]);
    const { agent, events } = testAgent({
      provider,
      tools,
      protocol: 'native',
      repair: (_, { call: { args } }) => ({ args: { ...args, team: String(args.team).toLowerCase() } }),
    });
    const result = await agent.run('Move 7 to blue.');
    expect(result.stats.repairs).toBe(1);
    expect(executed).toEqual(['set_team:7:blue']);
    expect(events.find('tool.repaired')!.data).toMatchObject({ before: { args: { team: 'Blue' } }, after: { args: { team: 'blue' } } });
    const toolMessage = provider.requests[1]!.messages.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'tool', callId: 'c1' });
    expect(toolMessage.content).toMatch(/^Note: set_team \(c1\) was rejected/);
    expect(toolMessage.content).toMatch(/completed/);
  });

  it('validates the fix again: a fix that is still wrong is a failed repair and the rejection stands', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'Blue' }))]);
    const { agent, events } = testAgent({ provider, tools, maxCorrections: 1, repair: () => ({ args: { player_id: '7', team: 'green' } }) });
    const result = await agent.run('Move 7.');
    expect(executed).toEqual([]);
    expect(events.find('tool.repair.failed')!.data).toMatchObject({ callId: 'tester/1.1.1', name: 'set_team', by: 'function' });
    expect(events.find('tool.repair.failed')!.data.reason).toMatch(/rejected too/);
    // A failed repair counts toward maxCorrections like the rejection it was.
    expect(result).toMatchObject({ reason: 'error', stats: { repairs: 0, corrections: 1 } });
    expect(events.find('agent.observation')!.data.text).toMatch(/rejected; nothing ran/);
  });

  it.each([
    ['declines', () => undefined, /offered no fix/],
    ['throws', () => {
      throw new Error('no idea');
    }, /the repair threw: no idea/],
    ['rejects', () => Promise.reject(new Error('no idea')), /the repair threw: no idea/],
    ['returns a bad shape', () => ({ name: 7, args: {} }) as never, /must return/],
    ['returns prototype keys', () => ({ args: JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown> }), /__proto__/],
  ])('publishes tool.repair.failed when the repair %s', async (_, repair, reason) => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'Blue' })), 'Sorry.']);
    const { agent, events } = testAgent({ provider, tools, repair: repair as RepairFunction });
    const result = await agent.run('Move 7.');
    expect(executed).toEqual([]);
    expect(events.find('tool.repair.failed')!.data.reason).toMatch(reason);
    expect(result.stats).toMatchObject({ repairs: 0, corrections: 1 });
    expect(provider.requests[1]!.messages.at(-1)!.content).toMatch(/rejected; nothing ran/);
  });

  it('tries once per turn, never loops, and a repaired call cannot reach a tool the agent may not call', async () => {
    const { tools, executed } = rosterTools();
    let attempts = 0;
    const provider = scriptedProvider([action(call('lookup_playr', { player_id: '7' })), action(call('lookup_playr', { player_id: '9' })), 'Gave up.']);
    const { agent, events } = testAgent({
      provider,
      tools,
      allowedTools: ['lookup_player'],
      repair: (_, context) => {
        attempts++;
        return { name: 'set_team', args: { ...context.call.args, team: 'red' } };
      },
    });
    const result = await agent.run('go');
    expect(attempts).toBe(2);
    expect(executed).toEqual([]);
    expect(events.all.filter((event) => event.type === 'tool.repair.failed')).toHaveLength(2);
    expect(events.find('tool.repair.failed')!.data.reason).toMatch(/not permitted/);
    expect(result).toMatchObject({ reason: 'final_answer', stats: { repairs: 0, corrections: 2 } });
  });

  it('repairWithModel makes one extra model call with the issues; its usage counts', async () => {
    const { tools, executed } = rosterTools();
    const repairer = scriptedProvider([
      { text: '```json\n{"name": "set_team", "arguments": {"player_id": "7", "team": "blue"}}\n```', usage: { inputTokens: 40, outputTokens: 10, totalTokens: 50 } },
    ]);
    const provider = scriptedProvider([
      { text: action(call('set_team', { player_id: '7', team: 'azure' })), usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
      { text: 'Moved.', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
    ]);
    const { agent, events } = testAgent({ provider, tools, repair: repairWithModel({ provider: repairer }) });
    const result = await agent.run('Move 7 to blue.');
    expect(executed).toEqual(['set_team:7:blue']);
    expect(events.find('tool.repaired')!.data).toMatchObject({ by: 'model', after: { name: 'set_team', args: { player_id: '7', team: 'blue' } } });
    expect(repairer.requests).toHaveLength(1);
    const asked = repairer.requests[0]!.messages.map((message) => message.content).join('\n');
    expect(asked).toMatch(/azure/);
    expect(asked).toMatch(/"enum"/);
    expect(asked).toMatch(/must be one of|red.*blue/);
    expect(result.usage.totalTokens).toBe(54);
    // Not a deliberation: the round count and llm events are the agent's own.
    expect(result.rounds).toBe(2);
    expect(events.all.filter((event) => event.type === 'llm.request')).toHaveLength(2);
  });

  it('repairWithModel spends from the budget: a refused model call is a failed repair', async () => {
    const { tools, executed } = rosterTools();
    const repairer = scriptedProvider([]);
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'azure' }))]);
    const { agent, events } = testAgent({ provider, tools, budget: { modelCalls: 1 }, repair: repairWithModel({ provider: repairer }) });
    const result = await agent.run('go');
    expect(repairer.requests).toHaveLength(0);
    expect(executed).toEqual([]);
    expect(events.find('tool.repair.failed')!.data).toMatchObject({ by: 'model' });
    expect(events.find('tool.repair.failed')!.data.reason).toMatch(/modelCalls|model calls/);
    expect(result.reason).toBe('budget');
  });

  it('repairWithModel: a reply that is not a call is a failed repair by the model', async () => {
    const { tools } = rosterTools();
    const repairer = scriptedProvider(['I think you meant blue.']);
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'azure' })), 'Sorry.']);
    const { agent, events } = testAgent({ provider, tools, repair: repairWithModel({ provider: repairer }) });
    await agent.run('go');
    expect(events.find('tool.repair.failed')!.data).toMatchObject({ by: 'model' });
    expect(events.find('tool.repair.failed')!.data.reason).toMatch(/not a JSON call/);
  });

  it('starts no repair on a run a tool.rejected subscriber aborted: no model call is spent', async () => {
    const { tools, executed } = rosterTools();
    const repairer = scriptedProvider([{ text: '{"name": "set_team", "arguments": {"player_id": "7", "team": "blue"}}' }]);
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'azure' }))]);
    const byModel = repairWithModel({ provider: repairer });
    let repairs = 0;
    const { agent, events } = testAgent({ provider, tools, budget: { modelCalls: 5 }, repair: (rejection, context) => (repairs++, byModel(rejection, context)) });
    agent.bus.on('tool.rejected', () => agent.abort('operator left'));
    const result = await agent.run('go');
    expect(result.reason).toBe('aborted');
    expect(repairs).toBe(0);
    expect(repairer.requests).toHaveLength(0);
    expect(executed).toEqual([]);
    expect(events.types()).not.toContain('tool.repair.failed');
  });

  it("a repair's complete() refuses once the run is aborted: the provider is never asked", async () => {
    const { tools } = rosterTools();
    const repairer = scriptedProvider([{ text: 'null' }]);
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'azure' }))]);
    let refused: unknown;
    const { agent } = testAgent({
      provider,
      tools,
      repair: async (_rejection, context) => {
        agent.abort('operator left');
        try {
          await context.complete([{ role: 'user', content: 'fix it' }], { provider: repairer });
        } catch (error) {
          refused = error;
        }
        return undefined;
      },
    });
    const result = await agent.run('go');
    expect(result.reason).toBe('aborted');
    expect(repairer.requests).toHaveLength(0);
    expect(refused).toMatchObject({ name: 'AbortError' });
  });

  it.each([
    ['prose with a brace after the JSON', 'Here it is: {"name": "set_team", "arguments": {"player_id": "7", "team": "blue"}} (the } was wrong)'],
    ['braces inside strings', '{"name": "set_team", "arguments": {"player_id": "7", "team": "blue"}, "note": "was {azure} not \\"}\\""} trailing }'],
    ['two objects: the first is taken', '{"name": "set_team", "arguments": {"player_id": "7", "team": "blue"}}\n{"name": "set_team", "arguments": {"player_id": "7", "team": "red"}}'],
  ])('repairWithModel reads the first complete JSON object of the reply: %s', async (_case, text) => {
    const { tools, executed } = rosterTools();
    const repairer = scriptedProvider([text]);
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'azure' })), 'Moved.']);
    const { agent } = testAgent({ provider, tools, repair: repairWithModel({ provider: repairer }) });
    await agent.run('Move 7 to blue.');
    expect(executed).toEqual(['set_team:7:blue']);
  });

  it('ends an aborted run while the repair is out; its late fix never runs', async () => {
    const { tools, executed } = rosterTools();
    const fix = deferred<{ args: Record<string, unknown> }>();
    const provider = scriptedProvider([action(call('set_team', { player_id: '7', team: 'Blue' }))]);
    const { agent, events } = testAgent({ provider, tools, repair: () => fix.promise });
    const running = agent.run('go');
    await new Promise<void>((resolve) => agent.bus.once('tool.rejected', () => resolve()));
    agent.abort('operator left');
    const result = await running;
    fix.resolve({ args: { player_id: '7', team: 'blue' } });
    await fix.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(result.reason).toBe('aborted');
    expect(executed).toEqual([]);
    expect(events.types()).not.toContain('tool.repaired');
    expect(events.types()).not.toContain('tool.repair.failed');
  });
});
