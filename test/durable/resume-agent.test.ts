import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, createScene, defineTool, resumeAgent, scriptedProvider, type Envelope } from '../../src/index.js';
import { createSessionLog, readLog } from '../../src/record/index.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A till that charges (not safe to repeat) and a price list (read-only), counting what really ran. */
function shop(hang: { charge: boolean } = { charge: false }) {
  const charged: string[] = [];
  const looked: string[] = [];
  const charge = defineTool({
    name: 'charge',
    description: 'Charge a customer.',
    parameters: { type: 'object', properties: { who: { type: 'string' }, amount: { type: 'integer' } }, required: ['who', 'amount'] } as const,
    // The crashed process dies while the charge runs: it never comes back.
    execute: ({ who, amount }, { callId }) => (hang.charge ? new Promise<never>(() => charged.push(`${callId} ${who} ${amount}`)) : (charged.push(`${callId} ${who} ${amount}`), 'charged')),
  });
  const price = defineTool({
    name: 'price',
    description: 'Look up a price.',
    readOnly: true,
    parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] } as const,
    execute: ({ item }, { callId }) => (looked.push(`${callId} ${item}`), 4),
  });
  return { tools: [charge, price], charged, looked };
}

const REPLIES = [
  '<ACTION><price><item>ale</item></price></ACTION>',
  '<ACTION><charge><who>ana</who><amount>4</amount></charge></ACTION>',
  'Ana owes nothing more.',
];

describe('resumeAgent', () => {
  it('continues a run whose process died while a call ran: the model is told its outcome is unknown, and it never runs twice', async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resume-agent-'));
    const path = join(dir, 'till.jsonl');
    const first = shop({ charge: true });
    const log = createSessionLog(path);
    const agent = createAgent({ name: 'till', tools: first.tools, provider: scriptedProvider(REPLIES.slice(0, 2)), log });
    const started = new Promise<void>((resolve) => agent.bus.on('tool.started', (event) => (event.data.name === 'charge' ? resolve() : undefined)));
    void agent.run('Charge Ana for an ale.');
    await started;
    await new Promise((resolve) => setImmediate(resolve));
    log.closeSync(); // the process dies with the charge running
    expect(first.charged).toHaveLength(1);
    expect(first.looked).toHaveLength(1);

    const again = shop();
    const seen: string[] = [];
    const resumed = await resumeAgent(path, {
      name: 'till',
      tools: again.tools,
      // The log answers the two replies it holds; only the last is asked of the model.
      provider: scriptedProvider(REPLIES.slice(2)),
      onLive: (live) => void live.bus.on('*', (event) => void seen.push(event.type)),
    });
    await resumed.log.close();
    expect(resumed.result).toMatchObject({ reason: 'final_answer', text: 'Ana owes nothing more.' });
    expect(again.charged).toEqual([]); // never ran again
    expect(again.looked).toEqual([]); // its result was in the log
    expect(resumed.result.calls.find((call) => call.name === 'charge')).toMatchObject({ outcome: 'failed', attempts: 1 });
    const events = readLog(path).events;
    const failed = events.find((event): event is Envelope<'tool.failed'> => event.type === 'tool.failed');
    expect(failed?.data.error).toMatchObject({ kind: 'unknown', retryable: false, message: expect.stringMatching(/outcome of this call is unknown/) });
    const interrupted = events.filter((event): event is Envelope<'tool.interrupted'> => event.type === 'tool.interrupted');
    expect(interrupted.map((event) => event.data)).toEqual([{ callId: 'till/1.2.1', name: 'charge', args: { who: 'ana', amount: 4 }, rerun: false }]);
    const opened = events.filter((event): event is Envelope<'log.opened'> => event.type === 'log.opened').map((event) => event.data);
    expect(opened.map((data) => data.kind)).toEqual(['run', 'resume']);
    // The resume names the run it continues, as a scene's resume does.
    expect(opened[1]!.resumes).toBe(opened[0]!.run);
    const ids = events.map((event) => event.id);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(seen).toContain('agent.finished');
  });

  it('refuses a log whose last run finished, one of another agent, and a scene log', async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resume-agent-'));
    const path = join(dir, 'done.jsonl');
    const { tools } = shop();
    const agent = createAgent({ name: 'till', tools, provider: scriptedProvider(['Nothing to do.']), log: path });
    await agent.run('Anything?');
    await agent.close();
    await expect(resumeAgent(path, { name: 'till', tools, provider: scriptedProvider([]) })).rejects.toThrow(/cannot resume .*done\.jsonl: the last run of agent "till" finished: there is nothing to resume/);
    await expect(resumeAgent(path, { name: 'clerk', tools, provider: scriptedProvider([]) })).rejects.toThrow(/it records no run of agent "clerk"/);
    const scenePath = join(dir, 'scene.jsonl');
    const scene = createScene({ name: 'shop', log: scenePath });
    scene.add({ name: 'till', tools, brain: () => 'Quiet day.' });
    await scene.run({ ticks: 1 });
    await expect(resumeAgent(scenePath, { name: 'till', tools, provider: scriptedProvider([]) })).rejects.toThrow(/it records a scene: continue it with resumeScene \(troupe resume\)/);
  });
});
