import { mkdtempSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent, defineSkill, type ScriptedReply } from '../../src/index.js';
import { createSessionLog, readLog } from '../../src/record/index.js';
import { recordEvents, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, teamTools, toolTrace } from './fixtures.js';

const NO_HANG = { timeout: 5_000 };

/** A `research` skill whose child agent has the roster tools and follows `script`. */
function researchSkill(script: ScriptedReply[], agent: { maxRounds?: number } = {}) {
  const team = teamTools();
  const childProvider = scriptedProvider(script);
  const research = defineSkill({
    name: 'research',
    description: 'Researches a question with the roster.',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
    agent: { instructions: 'You research the roster.', tools: [team.lookupPlayer, team.listTeam], provider: childProvider, ...agent },
    input: ({ question }) => `Question: ${String(question)}`,
  });
  return { ...team, childProvider, research };
}

describe('agent skills', () => {
  it('runs a child agent on the parent’s bus under its own name and returns its final text', async () => {
    const { research, childProvider, executed } = researchSkill([action(call('lookup_player', { player_id: '7' })), 'Player 7 is Ana, of red.']);
    const provider = scriptedProvider([action(call('research', { question: 'Who is 7?' })), 'Ana, of red.']);
    const { agent, events } = testAgent({ provider, tools: [research] });
    const result = await agent.run('Who is 7?');

    expect(result.reason).toBe('final_answer');
    expect(executed).toEqual(['lookup_player:7']);
    expect(childProvider.requests[0]!.messages.at(-1)!.content).toBe('Question: Who is 7?');
    expect(toolTrace(events)).toEqual([
      'tool.started:tester/1.1.1:research',
      'tool.started:tester/1.1.1/research/1.1.1:lookup_player',
      'tool.completed:tester/1.1.1/research/1.1.1:lookup_player',
      'tool.completed:tester/1.1.1:research',
    ]);
    expect(events.filter('tool.completed').at(-1)!.data.output).toBe('Player 7 is Ana, of red.');
    const childEvents = events.all.filter((event) => event.agent === 'tester/1.1.1/research');
    expect(childEvents[0]!.type).toBe('agent.spawned');
    expect(childEvents.at(-1)).toMatchObject({ type: 'agent.finished', data: { reason: 'final_answer' } });
    childProvider.assertConsumed();
    provider.assertConsumed();
  });

  it('hangs the child’s events under the skill call: every cause chain leads to its tool.started', async () => {
    const { research } = researchSkill([action(call('list_team', { team: 'blue' })), 'Bo.']);
    const provider = scriptedProvider([action(call('research', { question: 'Blue?' })), 'Bo.']);
    const { agent, events } = testAgent({ provider, tools: [research] });
    await agent.run('Who plays blue?');
    const skillStarted = events.find('tool.started')!;
    const byId = new Map(events.all.map((event) => [event.id, event]));
    const childEvents = events.all.filter((event) => event.agent === 'tester/1.1.1/research');
    expect(childEvents.length).toBeGreaterThan(5);
    for (const event of childEvents) {
      let cursor = event;
      while (cursor.cause !== undefined && cursor.cause !== skillStarted.id) cursor = byId.get(cursor.cause)!;
      expect(cursor.cause).toBe(skillStarted.id);
    }
  });

  it('gives each skill call a child of its own, so child call ids never repeat', async () => {
    const { research } = researchSkill([action(call('lookup_player', { player_id: '7' })), 'Ana.', action(call('lookup_player', { player_id: '9' })), 'Bo.']);
    const provider = scriptedProvider([
      action(call('research', { question: '7?' })),
      action(call('research', { question: '9?' })),
      'Ana and Bo.',
    ]);
    const { agent, events } = testAgent({ provider, tools: [research] });
    await agent.run('Who are 7 and 9?');
    const ids = events.filter('tool.started').map((event) => event.data.callId);
    expect(ids).toEqual(['tester/1.1.1', 'tester/1.1.1/research/1.1.1', 'tester/1.2.1', 'tester/1.2.1/research/1.1.1']);
  });

  it('completes under an agent concurrency of 1: the child has its own limiter', NO_HANG, async () => {
    const { research } = researchSkill([action(call('lookup_player', { player_id: '8' })), 'Cy.']);
    const provider = scriptedProvider([action(call('research', { question: '8?' })), 'Cy.']);
    const { agent } = testAgent({ provider, tools: [research], concurrency: 1 });
    expect((await agent.run('Who is 8?')).reason).toBe('final_answer');
  });

  it('fails the skill call when the child runs out of rounds', async () => {
    const { research } = researchSkill(
      [action(call('lookup_player', { player_id: '7' })), action(call('lookup_player', { player_id: '7' }))],
      { maxRounds: 1 },
    );
    const provider = scriptedProvider([action(call('research', { question: '7?' })), 'I could not find out.']);
    const { agent, events } = testAgent({ provider, tools: [research] });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('final_answer');
    const failed = events.filter('tool.failed').find((event) => event.data.callId === 'tester/1.1.1')!;
    expect(failed.data.error).toMatchObject({ kind: 'execution', retryable: false });
    expect(failed.data.error.message).toMatch(/^skill "research": child agent "tester\/1\.1\.1\/research" ended with max_rounds after 2 rounds/);
    const observation = events.filter('agent.observation').find((event) => event.agent === 'tester')!;
    expect(observation.data.text).toContain('ended with max_rounds');
  });

  it('fails the skill call when the child’s model fails (its script runs out)', async () => {
    const { research } = researchSkill([action(call('lookup_player', { player_id: '7' }))]);
    const provider = scriptedProvider([action(call('research', { question: '7?' })), 'No answer.']);
    const { agent, events } = testAgent({ provider, tools: [research], modelRetry: { attempts: 1 } });
    await agent.run('Who is 7?');
    const failed = events.filter('tool.failed').at(-1)!;
    expect(failed.data.callId).toBe('tester/1.1.1');
    expect(failed.data.error.message).toMatch(/child agent "tester\/1\.1\.1\/research" ended with error after 2 rounds: model call failed: .*script/);
  });

  it('refuses a child’s call of a skill that is already running in the chain', NO_HANG, async () => {
    const team = teamTools();
    const inner = defineSkill({ name: 'research', description: 'Inner.', parameters: { type: 'object', properties: {} }, tools: [team.lookupPlayer], run: () => 'inner' });
    const outer = defineSkill({
      name: 'research',
      description: 'Outer.',
      parameters: { type: 'object', properties: {} },
      agent: { tools: [inner], provider: scriptedProvider([action('<research></research>'), 'Gave up.']) },
    });
    const provider = scriptedProvider([action('<research></research>'), 'Done.']);
    const { agent, events } = testAgent({ provider, tools: [outer] });
    await agent.run('Research.');
    const innerFailure = events.filter('tool.failed').find((event) => event.data.callId === 'tester/1.1.1/research/1.1.1')!;
    expect(innerFailure.data.error.message).toBe('skill "research" is already running in this chain (research > research); a skill may not call itself');
    expect(events.filter('tool.completed').at(-1)!.data).toMatchObject({ callId: 'tester/1.1.1', output: 'Gave up.' });
  });

  it('writes the child’s events once to the parent’s log, and its calls fail closed when the log cannot record them', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'troupe-skill-log-')), 'run.jsonl');
    let full = false;
    const log = createSessionLog(path, {
      fs: {
        writeSync: (fd, buffer, offset, length) => {
          if (full) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
          return writeSync(fd, buffer, offset, length);
        },
      },
    });
    const { research, executed } = researchSkill([action(call('lookup_player', { player_id: '7' })), action(call('lookup_player', { player_id: '9' })), 'unused']);
    const provider = scriptedProvider([action(call('research', { question: '7 and 9?' })), 'unused']);
    const agent = createAgent({ name: 'ref', tools: [research], provider, log });
    const events = recordEvents(agent.bus);
    // The child's first call is recorded; the disk fills before its second.
    agent.bus.on('tool.completed', (event) => {
      if (event.data.callId === 'ref/1.1.1/research/1.1.1') full = true;
    });
    await agent.run('Who are 7 and 9?');
    expect(executed).toEqual(['lookup_player:7']);
    const childEnd = events.filter('agent.finished').find((event) => event.agent === 'ref/1.1.1/research')!;
    expect(childEnd.data).toMatchObject({ reason: 'error', error: expect.stringMatching(/dispatch failed: .*not recorded/) });
    await log.close();
    const started = readLog(path).events.filter((event) => event.type === 'tool.started').map((event) => (event.data as { callId: string }).callId);
    expect(started).toEqual(['ref/1.1.1', 'ref/1.1.1/research/1.1.1']);
  });
});
