import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, scriptedProvider, type ToolFailure } from '../../src/index.js';
import { mcpTools, type McpTools } from '../../src/mcp/index.js';
import { recordEvents } from '../../src/testing/index.js';
import { SERVERS } from './helpers.js';

// A fixture server built on the SDK's low-level Server: raw schemas and the quirks of real servers.
let quirky: McpTools;
const warnings: { tool?: string; message: string }[] = [];
const logger = {
  warn: (fields: { tool?: string }, message: string) => void warnings.push({ tool: fields.tool, message }),
  debug: () => undefined,
  info: () => undefined,
};

beforeAll(async () => {
  quirky = await mcpTools({
    command: process.execPath,
    args: [SERVERS.quirky],
    reserved: ['quirky__fail'],
    // Only `rename` asks: the predicate sees the tool's names and annotations.
    approval: (tool) => tool.name === 'rename' && tool.annotations.destructiveHint === true,
    logger: logger as never,
  });
}, 30_000);
afterAll(async () => {
  await quirky?.close();
});

/** Runs one agent over the quirky tools with the model's replies given; returns its events. */
async function run(replies: Parameters<typeof scriptedProvider>[0], options: { timeoutMs?: number } = {}) {
  const agent = createAgent({ name: 'tester', tools: quirky.tools, provider: scriptedProvider(replies), toolTimeoutMs: options.timeoutMs });
  const events = recordEvents(agent.bus);
  const result = await agent.run('go');
  return { result, events, failure: (): ToolFailure => events.find('tool.failed')!.data.error, output: () => events.find('tool.completed')?.data.output };
}

const call = (name: string, inner = '') => `<ACTION><${name}>${inner}</${name}></ACTION>`;

describe('mcpTools with a quirky server', { timeout: 20_000 }, () => {
  it('names tools after the server, maps what the rule refuses, and keeps names apart', () => {
    expect(quirky.server).toBe('quirky'); // from "acme/quirky"
    const names = quirky.tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['quirky__shapes_area', 'quirky__dup_x', 'quirky__dup_x_2', 'quirky__ghost', 'quirky__ghost-legacy']));
    // Over 64 characters: cut, with a digest of the full name so that two long names stay apart.
    const long = names.filter((name) => name.startsWith('quirky__longlong'));
    expect(long).toHaveLength(2);
    expect(long.every((name) => name.length === 64 && /_[0-9a-f]{8}$/.test(name))).toBe(true);
    expect(new Set(long).size).toBe(2);
    // A reserved name (a local tool's) is not taken over.
    expect(names).toContain('quirky__fail_2');
    expect(names).not.toContain('quirky__fail');
  });

  it('converts a 2020-12 schema, and skips what cannot be registered with the reason', () => {
    const area = quirky.tools.find((tool) => tool.name === 'quirky__shapes_area')!;
    expect(area.parameters).toEqual({
      type: 'object',
      properties: {
        size: { $ref: '#/definitions/Size' },
        origin: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], minItems: 2, maxItems: 2 },
        unit: { type: 'string' },
        label: { type: 'string' },
      },
      required: ['size'],
      dependencies: { label: ['unit'] },
      definitions: { Size: { type: 'object', properties: { width: { type: 'number', exclusiveMinimum: 0 }, height: { type: 'number', exclusiveMinimum: 0 } }, required: ['width', 'height'] } },
    });
    const lookup = quirky.tools.find((tool) => tool.name === 'quirky__lookup')!;
    expect(lookup.parameters['properties']).toEqual({
      code: { type: 'string', description: '(pattern: ^[A-Z]{3}$)' },
      color: { type: 'string', maxLength: 16, description: '(format: color)' },
      site: { type: 'string', description: '(format: uri)' },
    });
    expect(quirky.skipped).toEqual([
      { name: 'dynamic', reason: expect.stringContaining('"$dynamicRef" (JSON Schema 2019-09/2020-12) has no draft-07 equivalent') },
      { name: 'task-only', reason: expect.stringContaining('taskSupport "required"') },
    ]);
    expect(warnings).toEqual(
      expect.arrayContaining([{ tool: 'dynamic', message: expect.stringMatching(/^MCP tool "dynamic" skipped: .*\$dynamicRef/) }]),
    );
  });

  it('validates with the converted schema and calls with the server\'s names', async () => {
    const bad = await run([call('quirky__shapes_area', '<size><width>0</width><height>2</height></size>'), 'Oops.', ]);
    expect(bad.events.find('tool.rejected')!.data.message).toContain('width');
    const area = await run([call('quirky__shapes_area', '<size><width>3</width><height>2</height></size><origin>[0, 0]</origin>'), 'Six.']);
    expect(area.output()).toBe('6');

    const rename = quirky.tools.find((tool) => tool.name === 'quirky__rename')!;
    expect(Object.keys(rename.parameters['properties'] as object)).toEqual(['first_name_2', 'action_', 'first_name']);
    expect(rename.parameters['required']).toEqual(['first_name_2', 'action_']);
    expect(rename).toMatchObject({ needsApproval: true, idempotent: true });
    expect(quirky.tools.filter((tool) => tool.needsApproval === true).map((tool) => tool.name)).toEqual(['quirky__rename']);
    const agent = createAgent({
      name: 'tester',
      tools: quirky.tools,
      provider: scriptedProvider([call('quirky__rename', '<first_name_2>Ana</first_name_2><action_>greet</action_>'), 'Done.']),
    });
    agent.bus.on('tool.approval.requested', (event) => void agent.approve(event.data.callId));
    const events = recordEvents(agent.bus);
    await agent.run('go');
    expect(JSON.parse(events.find('tool.completed')!.data.output as string)).toEqual({ 'first name': 'Ana', action: 'greet' });
  });

  it('fails clearly on an unknown tool, whether the server answers isError or a JSON-RPC error', async () => {
    const current = await run([call('quirky__ghost'), 'Gone.']);
    expect(current.failure()).toMatchObject({ kind: 'execution', retryable: false, message: 'MCP error -32602: Tool ghost not found' });
    const legacy = await run([call('quirky__ghost-legacy'), 'Gone.']);
    expect(legacy.failure()).toMatchObject({ kind: 'execution', retryable: false, message: 'MCP server "quirky" answered with an error: MCP error -32602: Tool ghost-legacy not found' });
    const args = await run([call('quirky__legacy-args', '<n>3</n>'), 'Odd.']);
    expect(args.failure()).toMatchObject({ kind: 'execution', message: expect.stringContaining('n must be even') });
  });

  it('describes content troupe does not pass on, and passes on images by their bytes', async () => {
    const { events } = await run([call('quirky__media'), 'Seen.']);
    const completed = events.find('tool.completed')!;
    const parts = (completed.data.output as { parts: { type: string; text?: string; mediaType?: string }[] }).parts;
    expect(parts.map((part) => part.type)).toEqual(['text', 'image', 'image', 'text', 'text', 'text', 'text', 'text']);
    // Declared image/png, but the bytes are a JPEG: providers refuse a mismatch, so the bytes decide.
    expect(parts[2]).toMatchObject({ type: 'image', mediaType: 'image/jpeg' });
    expect(parts.slice(3).map((part) => part.text)).toEqual([
      '[image: image/svg+xml, 41 B, not passed on: troupe passes image/png, image/jpeg, image/gif, image/webp images]',
      '[audio: audio/wav, 2.9 KB, not shown]',
      '[resource link: todo.md <file:///notes/todo.md> (text/markdown; the list)]',
      '[resource: <memo://1>, text/plain]\nBuy milk.',
      '[resource: <memo://2>, application/zip, 300 B, binary, not shown]',
    ]);
    const empty = await run([call('quirky__empty'), 'Nothing.']);
    expect(empty.output()).toBe('');
    const failed = await run([call('quirky__fail_2'), 'Closed.']);
    expect(failed.failure()).toMatchObject({ kind: 'execution', message: 'the warehouse is closed\n[resource link: hours <https://acme.test/hours>]' });
  });

  it('sends notifications/cancelled when the agent aborts, and when the call times out', async () => {
    const agent = createAgent({ name: 'tester', tools: quirky.tools, provider: scriptedProvider([call('quirky__hang')]) });
    agent.bus.on('tool.started', () => setImmediate(() => agent.abort()));
    const events = recordEvents(agent.bus);
    expect((await agent.run('go')).reason).toBe('aborted');
    expect(events.find('tool.failed')!.data.error.kind).toBe('aborted');

    const timed = await run([call('quirky__hang'), 'Too slow.'], { timeoutMs: 200 });
    expect(timed.failure()).toMatchObject({ kind: 'timeout', retryable: true });

    const { output } = await run([call('quirky__cancellations'), 'Both.']);
    const received = JSON.parse(output() as string) as string[];
    expect(received).toHaveLength(2);
    expect(received[1]).toContain('timed out after 200 ms');
  });

  it('fails the calls of a server that dies with a clear network failure, then starts it again', async () => {
    const before = Number((await run([call('quirky__pid'), 'Pid.'])).output());
    const crashed = await run([call('quirky__crash'), 'It died.']);
    expect(crashed.failure()).toMatchObject({ kind: 'network', retryable: true });
    expect(crashed.failure().message).toMatch(/^MCP server "quirky" went away during the call: .*Connection closed.*its stderr: .*quirky: crashing on purpose/);
    expect(crashed.events.find('agent.observation')!.data.text).toContain('went away');
    expect(warnings.some((warning) => warning.message.includes('MCP session lost'))).toBe(true);

    const after = Number((await run([call('quirky__pid'), 'Pid.'])).output());
    expect(after).toBeGreaterThan(0);
    expect(after).not.toBe(before);
  });
});

describe('closing', { timeout: 20_000 }, () => {
  it('ends the child, is harmless twice, and fails later calls clearly', async () => {
    const own = await mcpTools({ name: 'mine', command: process.execPath, args: [SERVERS.quirky] });
    const pidTool = own.tools.find((tool) => tool.name === 'mine__pid')!;
    const agent = createAgent({ name: 'tester', tools: [pidTool], provider: scriptedProvider([call('mine__pid'), 'Pid.', call('mine__pid'), 'Closed.']) });
    const events = recordEvents(agent.bus);
    await agent.run('go');
    const pid = Number(events.find('tool.completed')!.data.output);
    await Promise.all([own.close(), own.close()]);
    await own.close();
    expect(() => process.kill(pid, 0)).toThrow();

    await agent.run('again');
    expect(events.find('tool.failed')!.data.error).toMatchObject({
      kind: 'execution',
      retryable: false,
      message: 'MCP server "mine" was closed (close() was called); its tools take no more calls',
    });
  });

  it('rejects with mcp_connect_failed when the server cannot start, and ConfigError for bad options', async () => {
    await expect(mcpTools({ command: 'troupe-no-such-server' })).rejects.toMatchObject({
      code: 'mcp_connect_failed',
      message: expect.stringContaining('cannot connect to MCP server "troupe-no-such-server": spawn troupe-no-such-server ENOENT'),
    });
    await expect(mcpTools({ command: process.execPath, args: ['-e', 'process.stderr.write("bad config\\n"); process.exit(2)'] })).rejects.toMatchObject({
      code: 'mcp_connect_failed',
      message: expect.stringContaining('its stderr: bad config'),
    });
    await expect(mcpTools({} as never)).rejects.toMatchObject({ code: 'invalid_config', message: expect.stringContaining('exactly one of `command`') });
    await expect(mcpTools({ url: 'ftp://x' })).rejects.toThrow('url must be an http(s) URL');
    await expect(mcpTools({ command: 'x', name: '1st' })).rejects.toThrow('name "1st" must be a letter');
    await expect(mcpTools({ command: 'x', approval: 'sometimes' as never })).rejects.toThrow("approval must be 'destructive', 'always', 'never'");
    await expect(mcpTools({ command: 'x', timeoutMs: -1 })).rejects.toThrow('mcpTools: timeoutMs must be an integer from 0 (no limit)');
    await expect(mcpTools({ command: 'x', retry: { attempts: 0 } })).rejects.toThrow('mcpTools: retry.attempts must be an integer from 1');
    await expect(mcpTools({ command: 'x', reserved: 'taken' as never })).rejects.toThrow('reserved must be a list');
  });
});
