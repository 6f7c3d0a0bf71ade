import { describe, expect, it } from 'vitest';
import { defineTool, type Envelope } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { control, inspect } from '../inspect/helpers.js';

describe('review: inspector approval of a call with large arguments', () => {
  it('R10 a 70 KB write cannot be approved from the page (413), though the model may send 256 KB', async () => {
    const written: number[] = [];
    const write = defineTool({
      name: 'write_file', description: 'Write.', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      needsApproval: true, execute: ({ text }) => { written.push(String(text).length); return 'ok'; },
    });
    const text = 'x'.repeat(70_000);
    const { agent } = testAgent({ provider: scriptedProvider([`<ACTION><write_file><text>${text}</text></write_file></ACTION>`, 'Done.']), tools: [write] });
    const inspector = await inspect({ bus: agent.bus, agents: [agent] });
    const asked = new Promise<Envelope<'tool.approval.requested'>>((resolve) => agent.bus.once('tool.approval.requested', resolve));
    const running = agent.run('Write it.');
    const { data } = await asked;
    // What the page sends: the args it showed.
    const reply = await control(inspector.port, { type: 'approve', agent: 'tester', callId: data.callId, args: data.args });
    console.log('R10 status', reply.status, reply.body);
    agent.abort('test over');
    await running;
    await inspector.close();
    expect(reply.status).toBe(200);
  });
});
