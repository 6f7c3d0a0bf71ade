import { describe, expect, it } from 'vitest';
import type { ModelRequest, Provider, StreamEvent } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { normalizeEvents } from '../llm/normalize.js';
import { action, call, rosterTools } from './fixtures.js';

const deltas = (events: { filter(type: 'llm.delta'): { data: { text: string; round: number; attempt: number } }[] }, round = 1, attempt = 1) =>
  events
    .filter('llm.delta')
    .filter((event) => event.data.round === round && event.data.attempt === attempt)
    .map((event) => event.data.text);

describe('streaming deliberation', () => {
  it('shows the visible text as it is written, never the block, and runs the call', async () => {
    const { tools, executed } = rosterTools();
    const turn = `Let me check player seven. ${action(call('lookup_player', { player_id: '7' }))}`;
    const { agent, events } = testAgent({ tools, provider: scriptedProvider([turn, 'Player 7 is Ana.'], { stream: { chunkSize: 3 } }) });
    const result = await agent.run('Who is 7?');

    expect(result).toMatchObject({ reason: 'final_answer', text: 'Player 7 is Ana.' });
    expect(executed).toEqual(['lookup_player:7']);
    const first = deltas(events);
    expect(first.length).toBeGreaterThan(3);
    expect(first.join('')).toBe('Let me check player seven.');
    expect(first.join('')).not.toContain('<');
    expect(deltas(events, 2).join('')).toBe('Player 7 is Ana.');
    // Every delta of a round comes before its response, and the said text is what the deltas added up to.
    const types = events.types();
    expect(types.lastIndexOf('llm.delta', types.indexOf('llm.response'))).toBeLessThan(types.indexOf('llm.response'));
    expect(events.find('agent.said')!.data.text).toBe(first.join(''));
  });

  it('gives the same events as a whole response, plus the deltas', async () => {
    // As real providers answer an XML turn: the closer stripped as the stop sequence.
    const open = `Looking. <ACTION>${call('lookup_player', { player_id: '9' })}`;
    const turns = [{ text: open, finishReason: 'stop_sequence' as const, stopSequence: '</ACTION>' }, 'Bo.'];
    const run = async (stream: boolean) => {
      const { tools } = rosterTools();
      const { agent, events } = testAgent({ tools, provider: scriptedProvider(turns, { stream }) });
      await agent.run('Who is 9?');
      return normalizeEvents(events.all).filter((event) => event.type !== 'llm.delta');
    };
    expect(await run(true)).toEqual(await run(false));
  });

  it('stops the generation once </ACTION> closes', async () => {
    const { tools, executed } = rosterTools();
    let pulled = 0;
    let closed = false;
    let signal: AbortSignal | undefined;
    const endless: Provider = {
      name: 'endless',
      complete: () => Promise.reject(new Error('not used')),
      stream(request: ModelRequest): AsyncIterable<StreamEvent> {
        if (request.round > 1) return scriptedProvider(['Done.'], { stream: true }).stream!(request);
        signal = request.signal;
        return (async function* () {
          try {
            yield { type: 'text', text: `On it. ${action(call('lookup_player', { player_id: '7' }))}` } as const;
            for (;;) {
              pulled++;
              yield { type: 'text', text: ' and more' } as const;
            }
          } finally {
            closed = true;
          }
        })();
      },
    };
    const { agent, events } = testAgent({ tools, provider: endless });
    const result = await agent.run('go');

    expect(result.reason).toBe('final_answer');
    expect(executed).toEqual(['lookup_player:7']);
    expect(pulled).toBe(0);
    expect(closed).toBe(true);
    expect(signal!.aborted).toBe(true);
    expect(events.find('llm.response')!.data).toMatchObject({ round: 1, finishReason: 'stop' });
  });

  it('retries a stream cut mid-block from scratch, voids what it showed, and never runs the partial block', async () => {
    const { tools, executed } = rosterTools();
    const full = `Checking the roster now. ${action(call('lookup_player', { player_id: '7' }))}`;
    const provider = scriptedProvider(
      [
        { text: full, cutAfter: full.indexOf('<player_id>') + 5, error: { kind: 'network', message: 'ECONNRESET mid-stream' } },
        full,
        'Ana.',
      ],
      { stream: { chunkSize: 4 } },
    );
    const { agent, events } = testAgent({ tools, provider, modelRetry: { attempts: 3, backoffMs: 0 } });
    const result = await agent.run('Who is 7?');

    expect(result).toMatchObject({ reason: 'final_answer', text: 'Ana.' });
    expect(executed).toEqual(['lookup_player:7']);
    expect(events.filter('tool.started')).toHaveLength(1);
    expect(events.find('llm.superseded')!.data).toEqual({ round: 1, attempt: 1, reason: 'ECONNRESET mid-stream' });
    expect(events.find('llm.error')!.data).toMatchObject({ round: 1, kind: 'network', retryable: true, attempt: 1 });
    expect(deltas(events, 1, 1).join('')).toBe('Checking the roster now.');
    expect(deltas(events, 1, 2).join('')).toBe('Checking the roster now.');
    // The superseded notice comes after the void deltas and before the retry's first delta.
    const types = events.types();
    const superseded = types.indexOf('llm.superseded');
    const retried = events.all.findIndex((event) => event.type === 'llm.delta' && (event.data as { attempt: number }).attempt === 2);
    expect(superseded).toBeGreaterThan(0);
    expect(retried).toBeGreaterThan(superseded);
  });

  it('treats a stream that ends without finishing as a cut, and retries it', async () => {
    const { tools, executed } = rosterTools();
    const turn = action(call('lookup_player', { player_id: '9' }));
    const provider = scriptedProvider([{ text: turn, cutAfter: 12 }, turn, 'Bo.'], { stream: true });
    const { agent, events } = testAgent({ tools, provider, modelRetry: { attempts: 2, backoffMs: 0 } });
    await expect(agent.run('9?')).resolves.toMatchObject({ reason: 'final_answer', text: 'Bo.' });
    expect(executed).toEqual(['lookup_player:9']);
    expect(events.find('llm.error')!.data.message).toContain('the stream ended without finishing');
  });

  it('runs a block whose closer the provider stripped as a stop sequence', async () => {
    const { tools, executed } = rosterTools();
    const open = `<ACTION>${call('lookup_player', { player_id: '7' })}`;
    const provider = scriptedProvider([{ text: open, finishReason: 'stop_sequence', stopSequence: '</ACTION>' }, 'Ana.'], { stream: true });
    const { agent, events } = testAgent({ tools, provider });
    await agent.run('7?');
    expect(executed).toEqual(['lookup_player:7']);
    expect(events.filter('action.malformed')).toHaveLength(0);
    expect(provider.requests[0]!.stop).toEqual(['</ACTION>']);
  });

  it('streams native call arguments as deltas, then runs the calls', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider(
      [
        {
          text: 'Two lookups.',
          toolCalls: [
            { id: 'c1', name: 'lookup_player', arguments: '{"player_id":"7"}' },
            { id: 'c2', name: 'lookup_player', arguments: '{"player_id":"9"}' },
          ],
        },
        'Ana and Bo.',
      ],
      { stream: { chunkSize: 5 } },
    );
    const { agent, events } = testAgent({ tools, provider, protocol: 'native' });
    await agent.run('7 and 9?');

    expect(executed.sort()).toEqual(['lookup_player:7', 'lookup_player:9']);
    const pieces = events.filter('llm.tool_call.delta');
    expect(pieces.filter((piece) => piece.data.index === 0).map((piece) => piece.data.argumentsDelta).join('')).toBe('{"player_id":"7"}');
    expect(pieces.find((piece) => piece.data.index === 1)!.data).toMatchObject({ id: 'c2', name: 'lookup_player' });
    expect(deltas(events).join('')).toBe('Two lookups.');
  });

  it('an abort mid-stream ends the run as aborted, with no provider error', async () => {
    let agentRef: { abort(): void } | undefined;
    const provider: Provider = {
      name: 'slow',
      complete: () => Promise.reject(new Error('not used')),
      async *stream(request) {
        yield { type: 'text', text: 'Thinking about it' };
        agentRef!.abort();
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (request.signal.aborted) throw new Error('aborted by the caller');
        yield { type: 'text', text: ' more' };
      },
    };
    const { agent, events } = testAgent({ provider });
    agentRef = agent;
    const result = await agent.run('go');
    expect(result.reason).toBe('aborted');
    expect(events.filter('llm.error')).toHaveLength(0);
    expect(events.filter('tool.started')).toHaveLength(0);
  });

  it('with stream: false, asks for whole responses', async () => {
    const provider = scriptedProvider(['Hello.'], { stream: true });
    const { agent, events } = testAgent({ provider, stream: false });
    await agent.run('hi');
    expect(events.filter('llm.delta')).toHaveLength(0);
    expect(events.find('agent.said')!.data.text).toBe('Hello.');
  });
});
