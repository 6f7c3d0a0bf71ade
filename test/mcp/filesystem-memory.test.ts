import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, scriptedProvider } from '../../src/index.js';
import { mcpTools, type McpTools } from '../../src/mcp/index.js';
import { recordEvents } from '../../src/testing/index.js';
import { SERVERS } from './helpers.js';

// The filesystem and memory reference servers from npm, each a child process over stdio.
const work = realpathSync(mkdtempSync(join(tmpdir(), 'troupe-mcp-')));
const root = join(work, 'root');
let filesystem: McpTools;
let memory: McpTools;
beforeAll(async () => {
  const { mkdirSync } = await import('node:fs');
  mkdirSync(root);
  writeFileSync(join(root, 'notes.txt'), 'Buy rope.\n');
  writeFileSync(join(work, 'secret.txt'), 'not for you');
  [filesystem, memory] = await Promise.all([
    mcpTools({ name: 'fs', command: process.execPath, args: [SERVERS.filesystem, root] }),
    // The memory server keeps its graph where MEMORY_FILE_PATH says: the env option reaches it.
    mcpTools({ name: 'mem', command: process.execPath, args: [SERVERS.memory], env: { MEMORY_FILE_PATH: join(work, 'memory.jsonl') } }),
  ]);
}, 30_000);
afterAll(async () => {
  await Promise.all([filesystem?.close(), memory?.close()]);
});

function agentOn(tools: McpTools, replies: Parameters<typeof scriptedProvider>[0]) {
  const agent = createAgent({ name: 'clerk', tools: tools.tools, provider: scriptedProvider(replies) });
  return { agent, events: recordEvents(agent.bus) };
}

describe('the filesystem server', { timeout: 20_000 }, () => {
  it('reads inside its root and refuses a path outside it, in the server\'s words', async () => {
    const { agent, events } = agentOn(filesystem, [
      `<ACTION><fs__read_text_file><path>${join(root, 'notes.txt')}</path></fs__read_text_file></ACTION>`,
      `<ACTION><fs__read_text_file><path>${join(work, 'secret.txt')}</path></fs__read_text_file></ACTION>`,
      'I can read the notes only.',
    ]);
    await agent.run('Read both files.');
    const completed = events.find('tool.completed')!;
    // Structured content; the text part only repeats its one field, so it is left out.
    expect((completed.data.output as { parts: unknown[] }).parts).toEqual([{ type: 'json', value: { content: 'Buy rope.\n' } }]);
    const failed = events.find('tool.failed')!;
    expect(failed.data.error).toMatchObject({ kind: 'execution', retryable: false });
    expect(failed.data.error.message).toContain('Access denied - path outside allowed directories');
    expect(events.filter('agent.observation')[1]!.data.text).toContain('Access denied');
  });

  it('asks before a destructive tool and writes once approved', async () => {
    const write = filesystem.tools.find((tool) => tool.name === 'fs__write_file')!;
    expect(write).toMatchObject({ needsApproval: true, idempotent: true });
    expect(filesystem.tools.find((tool) => tool.name === 'fs__read_text_file')).toMatchObject({ readOnly: true });
    expect(filesystem.tools.find((tool) => tool.name === 'fs__create_directory')).not.toHaveProperty('needsApproval');

    const target = join(root, 'plan.txt');
    const { agent, events } = agentOn(filesystem, [`<ACTION><fs__write_file><path>${target}</path><content>Sail at dawn.</content></fs__write_file></ACTION>`, 'Written.']);
    agent.bus.on('tool.approval.requested', (event) => void agent.approve(event.data.callId));
    await agent.run('Write the plan.');
    expect(events.types()).toEqual(expect.arrayContaining(['tool.approval.requested', 'tool.approval.resolved', 'tool.completed']));
    expect(readFileSync(target, 'utf8')).toBe('Sail at dawn.');
  });
});

describe('the memory server', { timeout: 20_000 }, () => {
  it('keeps entities across calls and returns them as structured content', async () => {
    const { agent, events } = agentOn(memory, [
      '<ACTION><mem__create_entities><entities>[{"name": "Mara", "entityType": "sailor", "observations": ["has rope"]}]</entities></mem__create_entities></ACTION>',
      '<ACTION><mem__search_nodes><query>Mara</query></mem__search_nodes></ACTION>',
      'Mara is a sailor with rope.',
    ]);
    await agent.run('Remember Mara.');
    const [created, found] = events.filter('tool.completed');
    expect(created!.data.parts).toEqual([{ type: 'json', chars: expect.any(Number) }]);
    expect((found!.data.output as { parts: { value: unknown }[] }).parts[0]!.value).toEqual({
      entities: [{ name: 'Mara', entityType: 'sailor', observations: ['has rope'] }],
      relations: [],
    });
    expect(readFileSync(join(work, 'memory.jsonl'), 'utf8')).toContain('"name":"Mara"');
    // Deleting is destructive: the default policy asks.
    expect(memory.tools.find((tool) => tool.name === 'mem__delete_entities')).toMatchObject({ needsApproval: true });
    expect(memory.tools.find((tool) => tool.name === 'mem__create_entities')).not.toHaveProperty('needsApproval');
  });
});
