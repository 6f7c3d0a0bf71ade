import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, type AgentStreamEvent } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

/** Parses Server-Sent Events text into its events (`event:` and one `data:` line each). */
function parseSSE(text: string): { event: string; data: unknown }[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))!.slice(7);
      const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
      return { event, data: JSON.parse(data) };
    });
}

const lookupTurn = `Checking. ${action(call('lookup_player', { player_id: '9' }))}`;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
});

/** Serves a web `Response` from node:http, as an adapter (or the example server) does. */
async function serve(handler: (url: URL, signal: AbortSignal) => Response): Promise<string> {
  server = createServer((request, reply) => {
    const hangUp = new AbortController();
    reply.on('close', () => hangUp.abort());
    const response = handler(new URL(request.url!, 'http://localhost'), hangUp.signal);
    reply.writeHead(response.status, Object.fromEntries(response.headers));
    void (async () => {
      for await (const chunk of response.body!) reply.write(chunk);
      reply.end();
    })().catch(() => reply.destroy());
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('agent.stream over the web', () => {
  it('converts to a ReadableStream of the same events', async () => {
    const { tools } = rosterTools();
    const { agent } = testAgent({ tools, provider: scriptedProvider([lookupTurn, 'Bo.'], { stream: true }) });
    const stream = agent.stream('Who is 9?');
    const events: AgentStreamEvent[] = [];
    const reader = stream.toReadableStream().getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) events.push(next.value);
    expect(events.map((event) => event.type)).toEqual(['start', 'text-delta', 'text-delta', 'call', 'result', 'text-delta', 'finish']);
    expect(events.at(-1)).toEqual({ type: 'finish', result: await stream.result });
  });

  it('makes a Server-Sent Events Response with the right headers', async () => {
    const { agent } = testAgent({ provider: scriptedProvider(['Hello.']) });
    const response = agent.stream('hi').toSSEResponse({ headers: { 'x-run': 'one' }, status: 201 });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect(response.headers.get('x-run')).toBe('one');
    const text = await response.text();
    expect(text).toMatch(/^event: start\ndata: \{"type":"start","agent":"tester","run":1\}\n\n/);
    expect(parseSSE(text).map((frame) => frame.event)).toEqual(['start', 'text-delta', 'finish']);
  });

  it('is served by a real HTTP server and read with fetch, event by event', async () => {
    const { tools } = rosterTools();
    const { agent } = testAgent({ tools, provider: scriptedProvider([lookupTurn, 'Player 9 is Bo.\nOn blue.'], { stream: { chunkSize: 4 } }) });
    const base = await serve((url) => agent.stream(url.searchParams.get('q')!).toSSEResponse());
    const response = await fetch(`${base}/chat?q=${encodeURIComponent('Who is 9?')}`);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const frames = parseSSE(await response.text());
    const events = frames.map((frame) => frame.data as AgentStreamEvent);
    expect(frames.every((frame, index) => frame.event === events[index]!.type)).toBe(true);
    expect(events.find((event) => event.type === 'call')).toMatchObject({ name: 'lookup_player', args: { player_id: '9' } });
    expect(events.find((event) => event.type === 'result')).toMatchObject({ output: { name: 'Bo', team: 'blue' } });
    const text = events.flatMap((event) => (event.type === 'text-delta' && event.round === 2 ? [event.text] : [])).join('');
    expect(text).toBe('Player 9 is Bo.\nOn blue.');
    expect(events.at(-1)).toMatchObject({ type: 'finish', result: { reason: 'final_answer', text } });
  });

  it('aborts the run when the client hangs up, given the request signal', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = defineTool({
      name: 'slow',
      description: 'Takes its time.',
      parameters: { type: 'object', properties: {} },
      execute: (_args, { signal }) => {
        started();
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      },
    });
    const { agent } = testAgent({ tools: [slow], provider: scriptedProvider([action(call('slow', {})), 'never']) });
    const finished = new Promise((resolve) => agent.bus.once('agent.finished', (event) => resolve(event.data)));
    const base = await serve((_url, signal) => agent.stream('go', { signal }).toSSEResponse());
    const client = new AbortController();
    const response = await fetch(`${base}/chat`, { signal: client.signal });
    const reader = response.body!.getReader();
    await reader.read();
    await running;
    client.abort();
    await expect(finished).resolves.toMatchObject({ reason: 'aborted', error: 'aborted by the caller' });
  });
});
