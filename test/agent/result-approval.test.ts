import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { defineTool, type Agent } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

const requested = (agent: Agent) =>
  new Promise<void>((resolve) => agent.bus.once('tool.result.approval.requested', () => resolve()));

/** A tool that reads a file; its result may hold a secret the model must not see unchecked. */
function readerSetup(needsResultApproval: boolean | ((output: unknown, args: Record<string, unknown>) => boolean | Promise<boolean>), protocol: 'xml' | 'native' = 'xml') {
  const executed: string[] = [];
  const readFile = defineTool({
    name: 'read_file',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string', maxLength: 64 } }, required: ['path'], additionalProperties: false },
    needsResultApproval,
    execute: ({ path }) => {
      executed.push(String(path));
      return { path, text: 'password=hunter2' };
    },
  });
  const provider = scriptedProvider(
    protocol === 'xml'
      ? [action(call('read_file', { path: '.env' })), 'Done.']
      : [{ toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path": ".env"}' }] }, 'Done.'],
  );
  const { agent, events } = testAgent({ provider, tools: [readFile, ...rosterTools().tools], protocol });
  return { agent, events, executed, provider };
}

describe('result approval', () => {
  it('runs the call, then holds its result until approved; the model sees it only then', async () => {
    const { agent, events, executed, provider } = readerSetup(true);
    const asked = requested(agent);
    const running = agent.run('Read .env');
    await asked;
    expect(executed).toEqual(['.env']);
    expect(agent.state).toBe('awaitingResultApproval');
    expect(provider.requests).toHaveLength(1);
    expect(events.types()).not.toContain('agent.observation');
    const [pending] = agent.pendingResultApprovals();
    expect(pending).toEqual({ callId: 'tester/1.1.1', name: 'read_file', args: { path: '.env' }, output: { path: '.env', text: 'password=hunter2' }, outputHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(events.find('tool.result.approval.requested')!.data).toEqual(pending);
    expect(agent.pendingApprovals()).toEqual([]);
    expect(agent.approveResult(pending!.callId)).toBe(true);
    const result = await running;
    expect(result.reason).toBe('final_answer');
    expect(events.find('tool.result.approval.resolved')!.data).toEqual({ callId: 'tester/1.1.1', name: 'read_file', approved: true, reason: 'approved' });
    expect(provider.requests[1]!.messages.at(-1)!.content).toMatch(/hunter2/);
    expect(result.calls).toEqual([expect.objectContaining({ callId: 'tester/1.1.1', outcome: 'completed' })]);
  });

  it('binds a result approval to the outputHash of the request: another hash is refused', async () => {
    const { agent, events, provider } = readerSetup(true);
    const asked = requested(agent);
    const running = agent.run('Read .env');
    await asked;
    const { callId, outputHash } = events.find('tool.result.approval.requested')!.data;
    expect(outputHash).toBe(createHash('sha256').update('{"path":".env","text":"password=hunter2"}').digest('hex'));
    expect(agent.pendingResultApprovals()[0]!.outputHash).toBe(outputHash);
    expect(agent.approveResult(callId, { outputHash: 'f'.repeat(64) })).toBe(false);
    expect(agent.state).toBe('awaitingResultApproval');
    expect(agent.approveResult(callId, { outputHash })).toBe(true);
    expect((await running).reason).toBe('final_answer');
    expect(provider.requests[1]!.messages.at(-1)!.content).toMatch(/hunter2/);
  });

  it('tells the model RESULT_REJECTED with the reason, and never shows it the output', async () => {
    const { agent, events, provider } = readerSetup(true);
    const asked = requested(agent);
    const running = agent.run('Read .env');
    await asked;
    expect(agent.rejectResult('tester/1.1.1', 'contains a password')).toBe(true);
    const result = await running;
    expect(events.find('tool.result.approval.resolved')!.data).toEqual({ callId: 'tester/1.1.1', name: 'read_file', approved: false, reason: 'contains a password' });
    const seen = provider.requests[1]!.messages.at(-1)!.content;
    expect(seen).toMatch(/read_file \(tester\/1\.1\.1\) ran, but its result was withheld: RESULT_REJECTED: contains a password/);
    expect(seen).not.toMatch(/hunter2/);
    expect(events.find('agent.observation')!.data).toMatchObject({ ok: false });
    expect(events.find('agent.observation')!.data.text).not.toMatch(/hunter2/);
    expect(result.calls).toEqual([expect.objectContaining({ outcome: 'result_rejected' })]);
    expect(result.stats.calls).toBe(1);
  });

  it('works with native calls: the tool message carries the rejection', async () => {
    const { agent, provider } = readerSetup(true, 'native');
    const asked = requested(agent);
    const running = agent.run('Read .env');
    await asked;
    agent.rejectResult('c1');
    await running;
    const message = provider.requests[1]!.messages.at(-1)!;
    expect(message).toMatchObject({ role: 'tool', callId: 'c1' });
    expect(message.content).toMatch(/RESULT_REJECTED: rejected by the operator/);
    expect(message.content).not.toMatch(/hunter2/);
  });

  it('holds only what the predicate asks for, with the output and arguments it is given', async () => {
    const seen: unknown[] = [];
    const { agent, events } = readerSetup((output, args) => {
      seen.push([output, args]);
      return false;
    });
    const result = await agent.run('Read .env');
    expect(result.reason).toBe('final_answer');
    expect(seen).toEqual([[{ path: '.env', text: 'password=hunter2' }, { path: '.env' }]]);
    expect(events.types()).not.toContain('tool.result.approval.requested');
    expect(events.types()).not.toContain('tool.result.approval.resolved');
  });

  it('waits for an async predicate', async () => {
    const { agent } = readerSetup(async (output) => JSON.stringify(output).includes('password'));
    const asked = requested(agent);
    const running = agent.run('Read .env');
    await asked;
    agent.approveResult('tester/1.1.1');
    await expect(running).resolves.toMatchObject({ reason: 'final_answer' });
  });

  it.each([
    ['throws', () => {
      throw new Error('scanner down');
    }],
    ['rejects', () => Promise.reject(new Error('scanner down'))],
  ])('fails closed when the predicate %s: the result is withheld without asking', async (_, predicate) => {
    const { agent, events, provider } = readerSetup(predicate);
    await agent.run('Read .env');
    expect(events.types()).not.toContain('tool.result.approval.requested');
    expect(events.find('tool.result.approval.resolved')!.data).toMatchObject({ approved: false, reason: 'result approval check failed: scanner down' });
    expect(provider.requests[1]!.messages.at(-1)!.content).toMatch(/RESULT_REJECTED: result approval check failed: scanner down/);
    expect(provider.requests[1]!.messages.at(-1)!.content).not.toMatch(/hunter2/);
  });

  it('does not hold a failed call: there is no result to approve', async () => {
    const failing = defineTool({
      name: 'read_file',
      description: 'Read a file.',
      parameters: { type: 'object', properties: {} },
      needsResultApproval: true,
      execute: () => {
        throw new Error('ENOENT');
      },
    });
    const provider = scriptedProvider(['<ACTION><read_file/></ACTION>', 'Missing.']);
    const { agent, events } = testAgent({ provider, tools: [failing] });
    await agent.run('go');
    expect(events.types()).toContain('tool.failed');
    expect(events.types()).not.toContain('tool.result.approval.requested');
  });

  it('observes the whole turn once every held result is decided', async () => {
    const { tools } = rosterTools();
    const secret = defineTool({
      name: 'secret',
      description: 'A secret.',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      readOnly: true,
      needsResultApproval: true,
      execute: ({ n }) => `secret-${String(n)}`,
    });
    const provider = scriptedProvider(['<ACTION><secret><n>1</n></secret><lookup_player><player_id>7</player_id></lookup_player><secret><n>2</n></secret></ACTION>', 'ok']);
    const { agent, events } = testAgent({ provider, tools: [secret, ...tools] });
    const bothAsked = new Promise<void>((resolve) => {
      let count = 0;
      agent.bus.on('tool.result.approval.requested', () => void (++count === 2 && resolve()));
    });
    const running = agent.run('go');
    await bothAsked;
    expect(agent.pendingResultApprovals().map((pending) => pending.output)).toEqual(['secret-1', 'secret-2']);
    agent.approveResult('tester/1.1.1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.types()).not.toContain('agent.observation');
    agent.rejectResult('tester/1.1.3', 'no');
    await running;
    const text = events.find('agent.observation')!.data.text;
    expect(text).toMatch(/secret-1/);
    expect(text).toMatch(/Ana/);
    expect(text).not.toMatch(/secret-2/);
    expect(text).toMatch(/\(tester\/1\.1\.3\) ran, but its result was withheld: RESULT_REJECTED: no/);
  });

  it('ends the run aborted when aborted while a result waits; later decisions are ignored and logged', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _, done) => void (lines.push(String(chunk)), done()) }));
    const executed: string[] = [];
    const readFile = defineTool({
      name: 'read_file',
      description: 'Read a file.',
      parameters: { type: 'object', properties: {} },
      needsResultApproval: true,
      execute: () => void executed.push('read'),
    });
    const provider = scriptedProvider(['<ACTION><read_file/></ACTION>']);
    const { agent, events } = testAgent({ provider, tools: [readFile], logger });
    const asked = requested(agent);
    const running = agent.run('go');
    await asked;
    agent.abort('operator left');
    expect(agent.approveResult('tester/1.1.1')).toBe(false);
    const result = await running;
    expect(agent.rejectResult('tester/1.1.1', 'late')).toBe(false);
    expect(result.reason).toBe('aborted');
    expect(result.observation).toBeUndefined();
    expect(result.calls).toEqual([expect.objectContaining({ callId: 'tester/1.1.1', outcome: 'completed' })]);
    expect(executed).toEqual(['read']);
    expect(events.types()).not.toContain('tool.result.approval.resolved');
    expect(events.types()).not.toContain('agent.observation');
    expect(lines.filter((line) => /no result of this call waits for approval/.test(line))).toHaveLength(2);
  });

  it('asks about the call, then about its result, when the tool needs both', async () => {
    const executed: string[] = [];
    const both = defineTool({
      name: 'export_users',
      description: 'Export the users.',
      parameters: { type: 'object', properties: {} },
      needsApproval: true,
      needsResultApproval: true,
      execute: () => {
        executed.push('export');
        return 'ana@example.com';
      },
    });
    const provider = scriptedProvider(['<ACTION><export_users/></ACTION>', 'Done.']);
    const { agent, events } = testAgent({ provider, tools: [both] });
    const callAsked = new Promise<void>((resolve) => agent.bus.once('tool.approval.requested', () => resolve()));
    const resultAsked = requested(agent);
    const running = agent.run('go');
    await callAsked;
    expect(executed).toEqual([]);
    expect(agent.approveResult('tester/1.1.1')).toBe(false);
    agent.approve('tester/1.1.1');
    await resultAsked;
    expect(executed).toEqual(['export']);
    agent.rejectResult('tester/1.1.1', 'personal data');
    await running;
    const states = events.all.filter((event) => event.type === 'agent.state').map((event) => (event.data as { to: string }).to);
    expect(states).toEqual(expect.arrayContaining(['awaitingApproval', 'dispatching', 'awaitingResultApproval', 'observing']));
    expect(provider.requests[1]!.messages.at(-1)!.content).toMatch(/RESULT_REJECTED: personal data/);
  });

  it('refuses decisions on calls that are not waiting', async () => {
    const { agent } = readerSetup(true);
    expect(agent.approveResult('nothing')).toBe(false);
    const asked = requested(agent);
    const running = agent.run('Read .env');
    await asked;
    expect(agent.approveResult('tester/9.9.9')).toBe(false);
    expect(agent.approve('tester/1.1.1')).toBe(false);
    expect(agent.rejectResult('tester/1.1.1', 'no')).toBe(true);
    expect(agent.approveResult('tester/1.1.1')).toBe(false);
    await running;
  });

  it('is checked by defineTool', () => {
    const base = { name: 't', description: 'd', parameters: { type: 'object' }, execute: () => 1 };
    expect(() => defineTool({ ...base, needsResultApproval: 'yes' as never })).toThrow(/needsResultApproval must be a boolean or a function/);
  });
});
