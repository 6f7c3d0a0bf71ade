import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, scriptedProvider, type Tool } from '../../src/index.js';
import { mcpTools, type McpTools } from '../../src/mcp/index.js';
import { recordEvents } from '../../src/testing/index.js';
import { isAlive, pidFrom, SERVERS, withPidFile } from './helpers.js';

// The reference server from npm (@modelcontextprotocol/server-everything), over stdio, one child
// process for the whole file.
let everything: McpTools;
beforeAll(async () => {
  everything = await mcpTools({ command: process.execPath, args: [SERVERS.everything, 'stdio'] });
}, 30_000);
afterAll(async () => {
  await everything?.close();
});

const tool = (name: string): Tool => everything.tools.find((candidate) => candidate.name === name)!;

function agentWith(replies: Parameters<typeof scriptedProvider>[0], protocol: 'xml' | 'native' = 'xml') {
  const provider = scriptedProvider(replies);
  const agent = createAgent({ name: 'tester', tools: everything.tools, provider, protocol });
  return { agent, provider, events: recordEvents(agent.bus) };
}

describe('mcpTools over stdio (server-everything)', { timeout: 20_000 }, () => {
  it('lists the tools as server__tool, with descriptions, schemas and annotations', () => {
    expect(everything.server).toBe('everything');
    const names = everything.tools.map((entry) => entry.name);
    expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__get-tiny-image', 'everything__trigger-long-running-operation']));
    expect(names.every((name) => /^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(name))).toBe(true);
    const echo = tool('everything__echo');
    expect(echo.description).toBe('Echoes back the input string');
    expect(echo.parameters).toEqual({ type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] });
    // readOnlyHint and idempotentHint; read-only tools never ask under the default policy.
    expect(echo).toMatchObject({ readOnly: true, idempotent: true });
    expect(echo.needsApproval).toBeUndefined();
    // Not read-only, destructiveHint false: no approval either; not idempotent: not marked.
    expect(tool('everything__toggle-simulated-logging')).not.toHaveProperty('readOnly');
    expect(tool('everything__toggle-simulated-logging')).not.toHaveProperty('needsApproval');
    // "format": "uri" without maxLength is left to the server and named in the description.
    expect(tool('everything__gzip-file-as-resource').parameters).toMatchObject({
      properties: { data: { type: 'string', description: 'URL or data URI of the file content to compress (format: uri)' } },
    });
    expect(everything.skipped).toEqual([{ name: 'simulate-research-query', reason: expect.stringContaining('taskSupport "required"') }]);
  });

  it('runs a call end to end through an agent, XML protocol', async () => {
    const { agent, provider, events } = agentWith([
      'Let me echo.\n<ACTION><everything__echo><message>hello there</message></everything__echo></ACTION>',
      '<ACTION><everything__get-sum><a>2</a><b>40.5</b></everything__get-sum></ACTION>',
      'The server said hello there, and 42.5.',
    ]);
    const result = await agent.run('Echo and add.');
    expect(result.reason).toBe('final_answer');
    expect(events.filter('tool.completed').map((event) => event.data.output)).toEqual(['Echo: hello there', 'The sum of 2 and 40.5 is 42.5.']);
    expect(events.filter('agent.observation')[0]!.data.text).toContain('Echo: hello there');
    provider.assertConsumed();
  });

  it('runs a call end to end through an agent, native protocol', async () => {
    const { agent, events } = agentWith(
      [{ toolCalls: [{ id: 'call_1', name: 'everything__get-sum', arguments: '{"a": 1, "b": 2}' }] }, 'Three.'],
      'native',
    );
    const result = await agent.run('Add.');
    expect(result.reason).toBe('final_answer');
    expect(events.find('tool.completed')!.data).toMatchObject({ name: 'everything__get-sum', args: { a: 1, b: 2 }, output: 'The sum of 1 and 2 is 3.' });
  });

  it('turns an image result into an image part, between its text parts', async () => {
    const { agent, events } = agentWith(['<ACTION><everything__get-tiny-image></everything__get-tiny-image></ACTION>', 'A logo.']);
    await agent.run('Show me.');
    const completed = events.find('tool.completed')!;
    expect(completed.data.parts).toEqual([
      { type: 'text', chars: 31 },
      { type: 'image', mediaType: 'image/png', bytes: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      { type: 'text', chars: 32 },
    ]);
    expect(events.find('agent.observation')!.data.text).toMatch(/\[image: image\/png, [\d.]+ KB, ref sha256:[0-9a-f]{12}/);
  });

  it('gives structured content as a JSON part, without the text copy of it', async () => {
    const { agent, events } = agentWith(['<ACTION><everything__get-structured-content><location>Chicago</location></everything__get-structured-content></ACTION>', 'Rainy.']);
    await agent.run('Weather?');
    const completed = events.find('tool.completed')!;
    expect(completed.data.parts).toEqual([{ type: 'json', chars: expect.any(Number) }]);
    expect((completed.data.output as { parts: unknown[] }).parts).toEqual([{ type: 'json', value: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 } }]);
  });

  it('fails the call with the server\'s text when the server answers isError (bad arguments)', async () => {
    const { agent, events } = agentWith([
      // Both pass troupe's check: the server's own validation refuses them.
      '<ACTION><everything__gzip-file-as-resource><data>not a url</data></everything__gzip-file-as-resource></ACTION>',
      '<ACTION><everything__get-resource-reference><resourceId>1.5</resourceId></everything__get-resource-reference></ACTION>',
      'Both failed.',
    ]);
    await agent.run('Compress.');
    const failures = events.filter('tool.failed').map((event) => event.data.error);
    expect(failures[0]).toMatchObject({ kind: 'execution', retryable: false, message: expect.stringContaining('Input validation error') });
    expect(failures[1]).toMatchObject({ kind: 'execution', retryable: false, message: expect.stringContaining('Invalid resourceId: 1.5') });
    expect(events.filter('agent.observation')[0]!.data.text).toContain('Input validation error');
  });

  it('publishes the server\'s progress notifications as tool.progress', async () => {
    const { agent, events } = agentWith([
      '<ACTION><everything__trigger-long-running-operation><duration>0.2</duration><steps>4</steps></everything__trigger-long-running-operation></ACTION>',
      'Done.',
    ]);
    await agent.run('Work.');
    const started = events.find('tool.started')!;
    const progress = events.filter('tool.progress');
    // The last notification may race the result (the SDK drops it once the result is in).
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.map((event) => event.data.progress)).toEqual([1, 2, 3, 4].slice(0, progress.length));
    expect(progress.every((event) => event.data.callId === started.data.callId && event.data.total === 4 && event.cause === started.id)).toBe(true);
    expect(events.find('tool.completed')!.data.output).toBe('Long running operation completed. Duration: 0.2 seconds, Steps: 4.');
  });

  it('aborts a running call: the run ends aborted, the session stays usable', async () => {
    const { agent, events } = agentWith([
      '<ACTION><everything__trigger-long-running-operation><duration>30</duration><steps>300</steps></everything__trigger-long-running-operation></ACTION>',
    ]);
    agent.bus.on('tool.progress', () => agent.abort());
    const result = await agent.run('Work long.');
    expect(result.reason).toBe('aborted');
    expect(events.find('tool.failed')!.data.error).toMatchObject({ kind: 'aborted' });

    const again = agentWith(['<ACTION><everything__echo><message>still here</message></everything__echo></ACTION>', 'Yes.']);
    await again.agent.run('Still there?');
    expect(again.events.find('tool.completed')!.data.output).toBe('Echo: still here');
  });
});

describe('a stdio server killed mid-session', { timeout: 20_000 }, () => {
  it('fails the call in flight (network, retryable, naming the server), then a new child answers', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'troupe-mcp-')), 'pid');
    const own = await mcpTools({ name: 'victim', ...withPidFile(SERVERS.everything, pidFile, ['stdio']) });
    try {
      const first = pidFrom(pidFile);
      const agent = createAgent({
        name: 'tester',
        tools: own.tools,
        provider: scriptedProvider([
          '<ACTION><victim__trigger-long-running-operation><duration>30</duration><steps>300</steps></victim__trigger-long-running-operation></ACTION>',
          'The server died.',
          '<ACTION><victim__echo><message>again</message></victim__echo></ACTION>',
          'It is back.',
        ]),
      });
      agent.bus.on('tool.progress', () => process.kill(first, 'SIGKILL'));
      const events = recordEvents(agent.bus);
      await agent.run('Work long.');
      const failure = events.find('tool.failed')!.data.error;
      expect(failure).toMatchObject({ kind: 'network', retryable: true });
      expect(failure.message).toMatch(/^MCP server "victim" went away during the call: MCP error -32000: Connection closed/);
      expect(isAlive(first)).toBe(false);

      await agent.run('Try again.');
      expect(events.find('tool.completed')!.data.output).toBe('Echo: again');
      expect(pidFrom(pidFile)).not.toBe(first);
    } finally {
      await own.close();
    }
    expect(isAlive(pidFrom(pidFile))).toBe(false);
  });
});
