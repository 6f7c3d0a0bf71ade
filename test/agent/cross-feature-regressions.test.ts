/**
 * Regressions found where memory, rich results, hooks, result approval and the inspector meet:
 * each test failed before its fix.
 */
import { describe, expect, it } from 'vitest';
import { createScene, defineTool, toolResult } from '../../src/index.js';
import { type CompactionPolicy } from '../../src/agent/memory/index.js';
import { deferred, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call } from './fixtures.js';
import { serializeEnvelope } from '../../src/bus/serialize-event.js';
import { createRedactor } from '../../src/record/redact.js';
import { runControlCommand } from '../../src/inspect/control-command.js';
import { CALL_XML, PNG as FIXTURE_PNG, resultTool } from '../tools/rich-results-fixtures.js';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);
const big = new Uint8Array(1_000_000); big.set(PNG);

const snapshot = () => defineTool({
  name: 'snapshot', description: 'Picture.', parameters: { type: 'object', properties: {} }, readOnly: true,
  execute: () => toolResult([{ type: 'text', text: 'map' }, { type: 'image', data: big, mediaType: 'image/png' }]),
});

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** A payment that waits for approval; `ran` lists whom it really paid. */
function approvedPay() {
  const ran: string[] = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pay.',
    parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'], additionalProperties: false },
    needsApproval: true,
    execute: ({ to }) => {
      ran.push(String(to));
      return 'paid';
    },
  });
  return { pay, ran };
}

describe('where memory, images, approvals and the inspector meet', () => {
  it('full-history memory keeps no image bytes: the budget cannot count them and later runs would resend them', async () => {
    const provider = scriptedProvider([action(call('snapshot', {})), 'A map.', 'ok', 'ok2'], { accepts: { imagesInUserMessages: true, imagesInToolResults: true } });
    const { agent } = testAgent({ provider, tools: [snapshot()], memory: { maxTokens: 200 } });
    await agent.run('Look.');
    await agent.run('Again.', { images: [{ data: big, mediaType: 'image/png' }] });
    await agent.run('Third.');
    const last = provider.requests.at(-1)!;
    const images = last.messages.flatMap((m) => (m as { images?: unknown[] }).images ?? []);
    expect(images.length).toBe(0);
  });

  it('compact memory keeps no image bytes of a run\'s input either', async () => {
    const provider = scriptedProvider([action(call('snapshot', {})), 'A map.', 'ok'], { accepts: { imagesInUserMessages: true } });
    const { agent } = testAgent({ provider, tools: [snapshot()], memory: { history: 'compact', maxTokens: 500 } });
    await agent.run('Look.', { images: [{ data: big, mediaType: 'image/png' }] });
    await agent.run('Again.');
    const last = provider.requests.at(-1)!;
    const images = last.messages.flatMap((m) => (m as { images?: unknown[] }).images ?? []);
    expect(images.length).toBe(0);
  });
  it('an async compaction policy that returns a malformed turn still lets run() resolve', async () => {
    const policy: CompactionPolicy = { name: 'bad', compact: async () => ({ turns: [{ messages: null as never }], dropped: 0, summarized: 0 }) };
    const provider = scriptedProvider(['one two three four five six seven eight nine ten eleven']);
    const { agent, events } = testAgent({ provider, memory: { maxTokens: 5, countTokens: words, compaction: policy } });
    const outcome = await Promise.race([agent.run('Question one'), new Promise((resolve) => setTimeout(() => resolve('HUNG'), 500))]);
    expect(outcome).not.toBe('HUNG');
  });

  it('a synchronous policy that returns a malformed turn falls back to dropping turns: the budget holds', async () => {
    const policy: CompactionPolicy = { name: 'bad', compact: () => ({ turns: [{ messages: null as never }], dropped: 0, summarized: 0 }) };
    const provider = scriptedProvider(['one two three four five six seven eight nine ten eleven']);
    const { agent } = testAgent({ provider, memory: { maxTokens: 5, countTokens: words, compaction: policy } });
    const result = await agent.run('Question one');
    expect(result.reason).toBe('final_answer');
    expect(agent.memory!.tokens()).toBeLessThanOrEqual(5);
  });

  it('arguments changed by a subscriber after the approval request never run: they are frozen', async () => {
    const { pay, ran } = approvedPay();
    const provider = scriptedProvider([action(call('pay', { to: 'alice' })), 'done']);
    const { agent } = testAgent({ provider, tools: [pay] });
    agent.bus.on('tool.approval.requested', (event) => {
      const shown = structuredClone(event.data.args);
      try { (event.data.args as Record<string, unknown>).to = 'mallory'; } catch { /* frozen */ } // any subscriber
      queueMicrotask(() => void agent.approve(event.data.callId, { args: shown }));
    });
    await agent.run('Pay alice');
    expect(ran).toEqual(['alice']);
  });

  it('pendingApprovals() hands out frozen arguments', async () => {
    const { pay, ran } = approvedPay();
    const provider = scriptedProvider([action(call('pay', { to: 'alice' })), 'done']);
    const { agent } = testAgent({ provider, tools: [pay] });
    agent.bus.on('tool.approval.requested', (event) => {
      queueMicrotask(() => {
        const [pending] = agent.pendingApprovals();
        try { (pending!.args as Record<string, unknown>).to = 'mallory'; } catch { /* frozen */ }
        agent.approve(event.data.callId);
      });
    });
    await agent.run('Pay alice');
    expect(ran).toEqual(['alice']);
  });
  it('agent.approve binds exactly: the redacted arguments a page shows do not approve the call by themselves', async () => {
    const login = defineTool({
      name: 'login', description: 'Log in.', parameters: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } }, required: ['user', 'password'], additionalProperties: false },
      needsApproval: true, execute: () => 'ok',
    });
    const provider = scriptedProvider([action(call('login', { user: 'ana', password: 'pw123456' })), 'done']);
    const { agent } = testAgent({ provider, tools: [login] });
    const redactor = createRedactor({ env: {} });
    let accepted: boolean | undefined;
    agent.bus.on('tool.approval.requested', (event) => {
      // What the page receives over SSE, and sends back as the args it showed.
      const shown = JSON.parse(serializeEnvelope(event, { redactor }).text).data.args;
      queueMicrotask(() => {
        accepted = agent.approve(event.data.callId, { args: shown });
        if (!accepted) agent.deny(event.data.callId, 'gave up');
      });
    });
    await agent.run('Log in');
    // agent.approve binds exactly; /control maps the page's redacted args back (R7b).
    expect(accepted).toBe(false);
  });
  it('compact history keeps a round\'s text once when the next model call is aborted', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Look.', parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, execute: () => 'found' });
    const hang = deferred<never>();
    let n = 0;
    const provider = {
      name: 'probe',
      complete: () => (++n === 1 ? { text: `Looking it up.${action(call('lookup', { id: '1' }))}` } : hang.promise),
    };
    const { agent } = testAgent({ provider: provider as never, tools: [lookup], memory: { history: 'compact' }, stream: false });
    agent.bus.on('llm.request', (event) => { if (event.data.round === 2) queueMicrotask(() => agent.abort('stop')); });
    const result = await agent.run('Find 1.');
    const kept = agent.memory!.messages().at(-1)!.content;
    expect(kept.split('Looking it up.').length - 1).toBe(1);
  });
  it('/control approves with the redacted arguments the page showed, and refuses changed ones', async () => {
    const ran: string[] = [];
    const login = defineTool({
      name: 'login', description: 'Log in.', parameters: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } }, required: ['user', 'password'], additionalProperties: false },
      needsApproval: true, execute: ({ password }) => { ran.push(String(password)); return 'ok'; },
    });
    const provider = scriptedProvider([action(call('login', { user: 'ana', password: 'pw123456' })), 'done']);
    const { agent } = testAgent({ provider, tools: [login] });
    const redactor = createRedactor({ env: {} });
    const target = { mode: 'live' as const, scene: undefined, agents: new Map([['tester', agent]]), gate: undefined, stream: { redactor } };
    agent.bus.on('tool.approval.requested', (event) => {
      const shown = JSON.parse(serializeEnvelope(event, { redactor }).text).data.args;
      queueMicrotask(() => {
        const tampered = runControlCommand({ type: 'approve', agent: 'tester', callId: event.data.callId, args: { ...shown, user: 'bo' } }, target);
        expect(tampered.ok).toBe(false);
        const done = runControlCommand({ type: 'approve', agent: 'tester', callId: event.data.callId, args: shown }, target);
        expect(done.ok).toBe(true);
      });
    });
    await agent.run('Log in');
    expect(ran).toEqual(['pw123456']);
  });
  const heldLookup = () =>
    defineTool({
      name: 'lookup',
      description: 'Look.',
      parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
      needsResultApproval: true,
      execute: ({ id }) => `secret ${String(id)}`,
    });

  it('memory keeps a native call that ran before an abort, with a tool message saying so (never the withheld result)', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"id":"1"}' }] }, 'next']);
    const { agent } = testAgent({ provider, tools: [heldLookup()], protocol: 'native', memory: true });
    agent.bus.once('tool.result.approval.requested', () => agent.abort('stop'));
    expect((await agent.run('Look.')).reason).toBe('aborted');
    await agent.run('Again.');

    const sent = provider.requests[1]!.messages;
    const assistant = sent.findIndex((message) => message.role === 'assistant');
    expect(sent[assistant]).toMatchObject({ toolCalls: [{ id: 'c1', name: 'lookup' }] });
    expect(sent[assistant + 1]).toMatchObject({ role: 'tool', callId: 'c1' });
    expect(sent[assistant + 1]!.content).toMatch(/aborted before these results were read.*lookup \(c1\): completed/);
    expect(sent.map((message) => message.content).join('\n')).not.toContain('secret 1');
    provider.assertConsumed();
  });

  it('memory never lists a denied call among the calls an aborted run made', async () => {
    const { pay, ran: payments } = approvedPay();
    const provider = scriptedProvider([
      { toolCalls: [{ id: 'c1', name: 'pay', arguments: '{"to":"mallory"}' }, { id: 'c2', name: 'lookup', arguments: '{"id":"1"}' }] },
      'next',
    ]);
    const { agent } = testAgent({ provider, tools: [pay, heldLookup()], protocol: 'native', memory: true });
    agent.bus.on('tool.approval.requested', (event) => void agent.deny(event.data.callId, 'no'));
    agent.bus.once('tool.result.approval.requested', () => agent.abort('stop'));
    expect((await agent.run('Pay and look.')).reason).toBe('aborted');
    await agent.run('Again.');

    const tools = provider.requests[1]!.messages.filter((message) => message.role === 'tool');
    expect(tools.map((message) => [message.callId, message.content])).toEqual([
      ['c1', 'Not run: the run was aborted.'],
      ['c2', expect.stringMatching(/These calls were made .*: lookup \(c2\): completed\.$/)],
    ]);
    expect(payments).toEqual([]);
    provider.assertConsumed();
  });

  it('compact memory logs a call that ran before an abort, never its withheld result', async () => {
    const provider = scriptedProvider([action(call('lookup', { id: '1' })), 'next']);
    const { agent } = testAgent({ provider, tools: [heldLookup()], memory: { history: 'compact' } });
    agent.bus.once('tool.result.approval.requested', () => agent.abort('stop'));
    expect((await agent.run('Look.')).reason).toBe('aborted');
    await agent.run('Again.');

    const kept = provider.requests[1]!.messages.map((message) => message.content).join('\n');
    expect(kept).toMatch(/\[tool log\] The run was aborted before these results were read.*lookup \(tester\/1\.1\.1\): completed/);
    expect(kept).not.toContain('secret 1');
    expect(agent.memory!.variables()).toEqual([]);
    provider.assertConsumed();
  });

  for (const history of ['full', 'compact'] as const) {
    it(`a scene member with ${history} memory sees the images of its last turn's observation once`, async () => {
      let turn = 0;
      const model = scriptedProvider(() => (turn++ === 0 ? CALL_XML('chart') : 'Wet March.'), { accepts: { imagesInUserMessages: true } });
      const scene = createScene({ name: 'weather', seed: 1, schedule: 'every-tick' });
      const chart = () => toolResult([{ type: 'text', text: 'Rainfall' }, { type: 'image', data: FIXTURE_PNG, mediaType: 'image/png' }]);
      scene.add({ name: 'forecaster', instructions: 'You read charts.', provider: model, tools: [resultTool('chart', chart)], memory: { history } });
      await scene.run({ ticks: 2 });
      expect(model.requests).toHaveLength(2);
      const images = model.requests[1]!.messages.flatMap((message) => ('images' in message && message.images !== undefined ? message.images : []));
      expect(images).toHaveLength(1);
    });
  }
});
