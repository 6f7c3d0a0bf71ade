import { describe, expect, it } from 'vitest';
import { defineTool, toolResult } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call } from './fixtures.js';

/**
 * Memory, rich results, repair and result approval were built side by side; these runs use them
 * together, where one could leak what another withholds or lose what another keeps.
 */

/** The eight-byte PNG signature and a little more: enough for the dispatcher's sniffing. */
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

function secretReader() {
  return defineTool({
    name: 'read_file',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string', maxLength: 64 } }, required: ['path'], additionalProperties: false },
    needsResultApproval: true,
    execute: ({ path }) => `${String(path)}: password=hunter2`,
  });
}

describe('memory, rich results, repair and result approval together', () => {
  it('keeps a withheld result out of compact history and out of the variables', async () => {
    const provider = scriptedProvider([action(call('read_file', { path: '.env' })), 'I could not read it.', 'No.']);
    const { agent } = testAgent({ provider, tools: [secretReader()], memory: { history: 'compact' } });
    agent.bus.on('tool.result.approval.requested', (event) => {
      agent.rejectResult(event.data.callId, 'holds a password');
    });

    expect((await agent.run('Read .env')).reason).toBe('final_answer');
    await agent.run('Anything else?');

    const kept = provider.requests[2]!.messages.map((message) => message.content).join('\n');
    expect(kept).toContain('read_file');
    expect(kept).toMatch(/read_file \{"path":"\.env"\} → result withheld: holds a password/);
    expect(kept).not.toContain('hunter2');
    expect(agent.memory!.variables()).toEqual([]);
    provider.assertConsumed();
  });

  it('stores a rich result as text in a variable that read_var pages, never its bytes', async () => {
    const snapshot = defineTool({
      name: 'snapshot',
      description: 'Take a picture of the map.',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      execute: () => toolResult([{ type: 'text', text: 'the map of the keep' }, { type: 'image', data: PNG, mediaType: 'image/png' }]),
    });
    const provider = scriptedProvider([action(call('snapshot', {})), 'A map.', action(call('read_var', { ref: '$r1' })), 'Read it.']);
    const { agent, events } = testAgent({ provider, tools: [snapshot], memory: { history: 'compact' } });

    await agent.run('Look at the map.');
    await agent.run('Read the result again.');

    const [stored] = agent.memory!.variables();
    expect(stored).toMatchObject({ ref: '$r1', tool: 'snapshot' });
    const read = events.filter('tool.completed').find((event) => event.data.name === 'read_var')!;
    const text = JSON.stringify(read.data.output);
    expect(text).toContain('the map of the keep');
    expect(text).toContain('image/png');
    // Bytes travel to providers that take images, never into the kept text.
    const kept = provider.requests[2]!.messages.map((message) => message.content).join('\n');
    expect(kept).not.toMatch(/iVBORw0KGgo/);
    provider.assertConsumed();
  });

  it('runs a repaired call under result approval, and keeps the repaired call in memory', async () => {
    const provider = scriptedProvider([action(call('read_file', { file: '.env' })), 'Read.', 'Yes.']);
    const { agent, events } = testAgent({
      provider,
      tools: [secretReader()],
      memory: { history: 'compact' },
      repair: (rejection, context) => (context.call.args.file !== undefined ? { args: { path: context.call.args.file } } : undefined),
    });
    agent.bus.on('tool.result.approval.requested', (event) => {
      agent.approveResult(event.data.callId);
    });

    const result = await agent.run('Read .env');
    await agent.run('Sure?');

    expect(result.stats.repairs).toBe(1);
    expect(events.types()).toEqual(expect.arrayContaining(['tool.rejected', 'tool.repaired', 'tool.result.approval.resolved', 'tool.completed']));
    const kept = provider.requests[2]!.messages.map((message) => message.content).join('\n');
    expect(kept).toMatch(/read_file \{"path":"\.env"\} → completed/);
    expect(agent.memory!.variables().map((variable) => variable.tool)).toEqual(['read_file']);
    provider.assertConsumed();
  });
});
