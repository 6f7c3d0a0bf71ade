import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, scriptedProvider } from '../../src/index.js';
import { mcpTools, type McpTools } from '../../src/mcp/index.js';
import { recordEvents } from '../../src/testing/index.js';
import { startHttpEverything, type HttpEverything } from './helpers.js';

// server-everything serving Streamable HTTP, a real child process on a loopback port, which the
// tests kill and start again.
let server: HttpEverything;
let everything: McpTools;
beforeAll(async () => {
  server = await startHttpEverything();
  everything = await mcpTools({ url: server.url, headers: { 'x-troupe-test': 'yes' }, name: 'web' });
}, 30_000);
afterAll(async () => {
  await everything?.close();
  await server?.stop();
});

async function run(replies: Parameters<typeof scriptedProvider>[0], onStart?: (agent: ReturnType<typeof createAgent>) => void) {
  const agent = createAgent({ name: 'tester', tools: everything.tools, provider: scriptedProvider(replies) });
  onStart?.(agent);
  const events = recordEvents(agent.bus);
  const result = await agent.run('go');
  return { result, events };
}

const LONG_CALL = '<ACTION><web__trigger-long-running-operation><duration>30</duration><steps>300</steps></web__trigger-long-running-operation></ACTION>';

describe('mcpTools over Streamable HTTP (server-everything)', { timeout: 20_000 }, () => {
  it('lists the tools under the given name and runs a call end to end', async () => {
    expect(everything.server).toBe('web');
    expect(everything.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['web__echo', 'web__get-sum', 'web__get-tiny-image']));
    expect(server.stdout()).toMatch(/Session initialized with ID: [0-9a-f-]{36}/);
    const { result, events } = await run(['<ACTION><web__echo><message>over http</message></web__echo></ACTION>', 'It echoed.']);
    expect(result.reason).toBe('final_answer');
    expect(events.find('tool.completed')!.data.output).toBe('Echo: over http');
  });

  it('streams progress and passes an image on', async () => {
    const { events } = await run([
      '<ACTION><web__trigger-long-running-operation><duration>0.2</duration><steps>4</steps></web__trigger-long-running-operation></ACTION>',
      '<ACTION><web__get-tiny-image></web__get-tiny-image></ACTION>',
      'Done.',
    ]);
    expect(events.filter('tool.progress').length).toBeGreaterThanOrEqual(2);
    expect(events.filter('tool.progress')[0]!.data).toMatchObject({ name: 'web__trigger-long-running-operation', progress: 1, total: 4 });
    expect(events.filter('tool.completed')[1]!.data.parts?.map((part) => part.type)).toEqual(['text', 'image', 'text']);
  });

  it('aborts a running call and keeps the session', async () => {
    const aborted = await run([LONG_CALL], (agent) => agent.bus.on('tool.progress', () => agent.abort()));
    expect(aborted.result.reason).toBe('aborted');
    const sessions = server.stdout().match(/Session initialized/g)!.length;
    const { events } = await run(['<ACTION><web__get-sum><a>1</a><b>1</b></web__get-sum></ACTION>', 'Two.']);
    expect(events.find('tool.completed')!.data.output).toBe('The sum of 1 and 1 is 2.');
    expect(server.stdout().match(/Session initialized/g)!.length).toBe(sessions);
  });

  it('fails a call whose server dies with a clear network failure, and opens a new session once it is back', async () => {
    // Killed while the call streams its progress.
    const killed = await run([LONG_CALL, 'It died.'], (agent) => agent.bus.on('tool.progress', () => void server.stop()));
    const failure = killed.events.find('tool.failed')!.data.error;
    expect(failure).toMatchObject({ kind: 'network', retryable: true, hint: expect.stringContaining('next call') });
    expect(failure.message).toMatch(/^MCP server "web" went away during the call: /);

    // While it is down: the call fails at once, saying it cannot be reached.
    const down = await run(['<ACTION><web__echo><message>anyone?</message></web__echo></ACTION>', 'Nobody.']);
    expect(down.events.find('tool.failed')!.data.error).toMatchObject({ kind: 'network', retryable: true, message: expect.stringMatching(/^cannot reach MCP server "web": /) });

    await server.start();
    const back = await run(['<ACTION><web__echo><message>back?</message></web__echo></ACTION>', 'Back.']);
    expect(back.events.find('tool.completed')!.data.output).toBe('Echo: back?');
    expect(server.stdout()).toMatch(/Session initialized with ID/);
  });

  it('opens a new session after the server restarted while the client was idle', async () => {
    // A restarted server has forgotten every session; the idle client does not know yet.
    await server.stop();
    await server.start();
    const { events } = await run(['<ACTION><web__echo><message>new session</message></web__echo></ACTION>', 'Ok.']);
    expect(events.find('tool.completed')!.data.output).toBe('Echo: new session');
    expect(events.filter('tool.failed')).toEqual([]);
  });

  it('ends the HTTP session on close', async () => {
    const own = await mcpTools({ url: server.url });
    const id = /Session initialized with ID: ([0-9a-f-]{36})/.exec(server.stdout().split('\n').filter((line) => line.includes('Session initialized')).pop()!)![1];
    await own.close();
    await own.close();
    expect(server.stdout()).toContain(`Received session termination request for session ${id}`);
  });
});
