import { describe, expect, it } from 'vitest';
import { defineSkill, defineTool } from '../../src/index.js';
import { deferred, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, teamTools, toolTrace } from './fixtures.js';

const NO_HANG = { timeout: 5_000 };

describe('aborting a skill', () => {
  it('aborts a workflow mid-step: the step’s signal fires, no later step starts, the run ends aborted', NO_HANG, async () => {
    const { lookupPlayer, listTeam, executed } = teamTools();
    const started = deferred();
    const seen: AbortSignal[] = [];
    const wait = defineTool({
      name: 'wait_for_draw',
      description: 'Waits for the draw.',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      execute: (_args, { signal }) => {
        seen.push(signal);
        started.resolve();
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
    });
    const draw = defineSkill({
      name: 'draw',
      description: 'Waits for the draw, then lists the red team.',
      parameters: { type: 'object', properties: {} },
      tools: [wait, lookupPlayer, listTeam],
      run: async (_args, steps) => {
        await steps.call('wait_for_draw');
        return steps.call('list_team', { team: 'red' });
      },
    });
    const provider = scriptedProvider([action('<draw></draw>'), 'unused']);
    const { agent, events } = testAgent({ provider, tools: [draw] });
    const running = agent.run('Draw.');
    await started.promise;
    agent.abort('stop the draw');
    const result = await running;

    expect(result.reason).toBe('aborted');
    expect(seen[0]!.aborted).toBe(true);
    expect(executed).toEqual([]);
    expect(toolTrace(events)).toEqual([
      'tool.started:tester/1.1.1:draw',
      'tool.started:tester/1.1.1/1:wait_for_draw',
      'tool.failed:tester/1.1.1/1:wait_for_draw',
      'tool.failed:tester/1.1.1:draw',
    ]);
    expect(events.filter('tool.failed').map((event) => event.data.error.kind)).toEqual(['aborted', 'aborted']);
    expect(events.types().at(-1)).toBe('agent.finished');
    expect(events.find('tool.zombie')).toBeUndefined();
  });

  it('aborts the child agent with the parent: its tool’s signal fires and both runs end aborted', NO_HANG, async () => {
    const started = deferred();
    const seen: AbortSignal[] = [];
    const wait = defineTool({
      name: 'wait_for_draw',
      description: 'Waits for the draw.',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      execute: (_args, { signal }) => {
        seen.push(signal);
        started.resolve();
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
    });
    const childProvider = scriptedProvider([action('<wait_for_draw></wait_for_draw>'), 'unused']);
    const draw = defineSkill({
      name: 'draw',
      description: 'A child agent waits for the draw.',
      parameters: { type: 'object', properties: {} },
      agent: { tools: [wait], provider: childProvider },
    });
    const provider = scriptedProvider([action('<draw></draw>'), 'unused']);
    const { agent, events } = testAgent({ provider, tools: [draw] });
    const running = agent.run('Draw.');
    await started.promise;
    agent.abort('stop the draw');
    const result = await running;

    expect(result.reason).toBe('aborted');
    expect(seen[0]!.aborted).toBe(true);
    const finished = events.filter('agent.finished').map((event) => `${event.agent}:${event.data.reason}`);
    expect(finished).toEqual(['tester/1.1.1/draw:aborted', 'tester:aborted']);
    expect(events.filter('tool.failed').map((event) => `${event.data.callId}:${event.data.error.kind}`)).toEqual([
      'tester/1.1.1/draw/1.1.1:aborted',
      'tester/1.1.1:aborted',
    ]);
  });
});
