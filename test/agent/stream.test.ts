import { describe, expect, it } from 'vitest';
import { defineTool, TroupeError, type AgentStream, type AgentStreamEvent } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

const collect = async (stream: AgentStream): Promise<AgentStreamEvent[]> => {
  const events: AgentStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
};
const textOf = (events: AgentStreamEvent[], round?: number) =>
  events
    .filter((event): event is Extract<AgentStreamEvent, { type: 'text-delta' }> => event.type === 'text-delta')
    .filter((event) => round === undefined || event.round === round)
    .map((event) => event.text)
    .join('');

const lookupTurn = `Let me check. ${action(call('lookup_player', { player_id: '7' }))}`;

describe('agent.stream', () => {
  it('streams the text, the call and its result in order, and ends with the finish', async () => {
    const { tools, executed } = rosterTools();
    const { agent } = testAgent({ tools, provider: scriptedProvider([lookupTurn, 'Player 7 is Ana.'], { stream: { chunkSize: 3 } }) });
    const stream = agent.stream('Who is 7?');
    const events = await collect(stream);

    const types = events.map((event) => event.type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('finish');
    expect(types.filter((type) => type === 'finish')).toHaveLength(1);
    // Deltas first, then the call, its result, and the next round's deltas.
    const callAt = types.indexOf('call');
    expect(types.slice(1, callAt).every((type) => type === 'text-delta')).toBe(true);
    expect(types.indexOf('result')).toBeGreaterThan(callAt);
    expect(types.lastIndexOf('text-delta')).toBeGreaterThan(types.indexOf('result'));
    expect(events.filter((event) => event.type === 'text-delta').length).toBeGreaterThan(4);
    expect(textOf(events, 1)).toBe('Let me check.');
    expect(events[callAt]).toMatchObject({ type: 'call', round: 1, callId: 'tester/1.1.1', name: 'lookup_player', args: { player_id: '7' } });
    expect(events.find((event) => event.type === 'result')).toMatchObject({ callId: 'tester/1.1.1', name: 'lookup_player', output: { name: 'Ana', team: 'red' } });
    expect(executed).toEqual(['lookup_player:7']);

    const result = await stream.result;
    expect(result).toMatchObject({ reason: 'final_answer', text: 'Player 7 is Ana.' });
    expect(textOf(events, 2)).toBe(result.text);
    expect(events.at(-1)).toEqual({ type: 'finish', result });
  });

  it('gives a provider that does not stream one text-delta per round', async () => {
    const { tools } = rosterTools();
    const { agent } = testAgent({ tools, provider: scriptedProvider([lookupTurn, 'Player 7 is Ana.']) });
    const events = await collect(agent.stream('Who is 7?'));
    expect(events.filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', round: 1, text: 'Let me check.' },
      { type: 'text-delta', round: 2, text: 'Player 7 is Ana.' },
    ]);
  });

  it('finishes with the same result as run', async () => {
    const script = [lookupTurn, 'Player 7 is Ana.'];
    const ran = await testAgent({ tools: rosterTools().tools, provider: scriptedProvider(script) }).agent.run('Who is 7?');
    const stream = testAgent({ tools: rosterTools().tools, provider: scriptedProvider(script) }).agent.stream('Who is 7?');
    const events = await collect(stream);
    const finish = events.at(-1) as Extract<AgentStreamEvent, { type: 'finish' }>;
    expect(finish.result).toBe(await stream.result);
    expect(finish.result).toEqual(ran);
  });

  it('shows approvals, and approve() lets the run go on', async () => {
    const executed: string[] = [];
    const transfer = defineTool({
      name: 'transfer',
      description: 'Move gold.',
      parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
      needsApproval: true,
      execute: ({ amount }) => {
        executed.push(String(amount));
        return `moved ${String(amount)}`;
      },
    });
    const { agent } = testAgent({ tools: [transfer], provider: scriptedProvider([action(call('transfer', { amount: '500' })), 'Moved.']) });
    const stream = agent.stream('Send 500 gold.');
    const seen: AgentStreamEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.type === 'approval-requested') {
        expect(event).toMatchObject({ name: 'transfer', args: { amount: 500 } });
        expect(event.argsHash).toMatch(/^[0-9a-f]{64}$/);
        expect(executed).toEqual([]);
        expect(agent.approve(event.callId, { argsHash: event.argsHash })).toBe(true);
      }
    }
    expect(seen.map((event) => event.type)).toEqual(['start', 'call', 'approval-requested', 'approval-resolved', 'result', 'text-delta', 'finish']);
    expect(seen[3]).toMatchObject({ approved: true });
    expect(executed).toEqual(['500']);
    expect((await stream.result).text).toBe('Moved.');
  });

  it('shows a denial as a rejected call', async () => {
    const transfer = defineTool({ name: 'transfer', description: 'Move gold.', parameters: { type: 'object', properties: {} }, needsApproval: true, execute: () => 'moved' });
    const { agent } = testAgent({ tools: [transfer], provider: scriptedProvider([action(call('transfer', {})), 'Not moved.']) });
    const events: AgentStreamEvent[] = [];
    for await (const event of agent.stream('Send gold.')) {
      events.push(event);
      if (event.type === 'approval-requested') agent.deny(event.callId, 'not today');
    }
    expect(events.find((event) => event.type === 'call-rejected')).toMatchObject({ name: 'transfer', code: 'denied', message: 'not today' });
    expect(events.some((event) => event.type === 'result')).toBe(false);
  });

  it('streams failed and rejected calls', async () => {
    const { tools } = rosterTools();
    const turn = action(call('set_team', { player_id: '3', team: 'red' }), call('no_such_tool', {}));
    const { agent } = testAgent({ tools, provider: scriptedProvider([turn, action(call('set_team', { player_id: '3', team: 'red' })), 'No player 3.']) });
    const events = await collect(agent.stream('Move 3 to red.'));
    expect(events.find((event) => event.type === 'call-rejected')).toMatchObject({ name: 'no_such_tool', code: 'unknown_tool' });
    expect(events.find((event) => event.type === 'call-failed')).toMatchObject({ name: 'set_team', error: { kind: 'execution', message: expect.stringContaining('no player 3') } });
  });

  it('ends with a finish of reason error when the model fails, and never throws while iterating', async () => {
    const provider = scriptedProvider([{ error: { kind: 'auth', message: 'bad key', retryable: false } }]);
    const { agent } = testAgent({ provider });
    const events = await collect(agent.stream('hi'));
    expect(events.at(-1)).toMatchObject({ type: 'finish', result: { reason: 'error', error: expect.stringContaining('bad key') } });
  });

  it('throws at once what run would reject with', async () => {
    const { agent } = testAgent({ provider: scriptedProvider(['a', 'b']) });
    const first = agent.stream('one');
    expect(() => agent.stream('two')).toThrow(TroupeError);
    await first.result;
    expect(() => agent.stream([])).toThrow(/empty/);
    await agent.close();
    expect(() => agent.stream('three')).toThrow(/closed/);
  });

  it('buffers for a slow consumer: the run never waits for it', async () => {
    const { tools } = rosterTools();
    const { agent } = testAgent({ tools, provider: scriptedProvider([lookupTurn, 'Player 7 is Ana.'], { stream: { chunkSize: 2 } }) });
    const stream = agent.stream('Who is 7?');
    const result = await stream.result;
    expect(agent.state).toBe('done');
    const events = await collect(stream);
    expect(events.at(-1)).toEqual({ type: 'finish', result });
    expect(textOf(events, 2)).toBe('Player 7 is Ana.');
  });

  it('may be consumed only once; textStream gives the text alone', async () => {
    const { agent } = testAgent({ provider: scriptedProvider(['Hello there.'], { stream: true }) });
    const stream = agent.stream('hi');
    let text = '';
    for await (const piece of stream.textStream) text += piece;
    expect(text).toBe('Hello there.');
    expect(() => stream.toReadableStream()).toThrow(/consumed already/);
  });

  it('aborts with the signal of the options', async () => {
    const slow = defineTool({ name: 'slow', description: 'Waits.', parameters: { type: 'object', properties: {} }, execute: (_args, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))) });
    const { agent } = testAgent({ tools: [slow], provider: scriptedProvider([action(call('slow', {})), 'never']) });
    const controller = new AbortController();
    const events: AgentStreamEvent[] = [];
    for await (const event of agent.stream('wait', { signal: controller.signal })) {
      events.push(event);
      if (event.type === 'call') setTimeout(() => controller.abort(), 5);
    }
    expect(events.find((event) => event.type === 'call-failed')).toMatchObject({ error: { kind: 'aborted' } });
    expect(events.at(-1)).toMatchObject({ type: 'finish', result: { reason: 'aborted' } });
  });

  it('breaking out leaves the run going, unless abortOnCancel', async () => {
    const gate = () => {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      const tool = defineTool({ name: 'wait', description: 'Waits.', parameters: { type: 'object', properties: {} }, execute: () => opened.then(() => 'opened') });
      return { tool, open };
    };
    for (const abortOnCancel of [false, true]) {
      const { tool, open } = gate();
      const { agent } = testAgent({ tools: [tool], provider: scriptedProvider([action(call('wait', {})), 'Opened.']) });
      const stream = agent.stream('go', { abortOnCancel });
      for await (const event of stream) if (event.type === 'call') break;
      open();
      const result = await stream.result;
      expect(result.reason).toBe(abortOnCancel ? 'aborted' : 'final_answer');
      if (abortOnCancel) expect(result.error).toBe('the stream was cancelled');
    }
  });

  it('takes only its own run: a run started from its finish is not streamed', async () => {
    const { agent } = testAgent({ provider: scriptedProvider(['First.', 'Second.']) });
    let second: Promise<unknown> | undefined;
    agent.bus.once('agent.finished', () => void (second = agent.run('again')));
    const events = await collect(agent.stream('once'));
    expect(events.filter((event) => event.type === 'start')).toEqual([{ type: 'start', agent: 'tester', run: 1 }]);
    expect(textOf(events)).toBe('First.');
    await second;
  });
});
