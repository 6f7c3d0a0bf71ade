import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineSkill, defineTool, ToolError } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, toolTrace } from './fixtures.js';

afterEach(() => {
  vi.useRealTimers();
});

const noParameters = { type: 'object', properties: {} } as const;

/** A tool that waits until its signal aborts, then rejects with the reason (well behaved). */
function waitingTool() {
  const seen: AbortSignal[] = [];
  const tool = defineTool({
    name: 'wait_for_draw',
    description: 'Waits for the draw.',
    parameters: noParameters,
    readOnly: true,
    timeoutMs: 0,
    execute: (_args, { signal }) => {
      seen.push(signal);
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
  });
  return { tool, seen };
}

describe('skill timeouts and retries', () => {
  it('times out the whole workflow: the running step is aborted and reports before the skill', async () => {
    vi.useFakeTimers();
    const { tool, seen } = waitingTool();
    const draw = defineSkill({
      name: 'draw',
      description: 'Waits for the draw.',
      parameters: noParameters,
      timeoutMs: 1_000,
      tools: [tool],
      run: (_args, steps) => steps.call('wait_for_draw'),
    });
    const provider = scriptedProvider([action('<draw></draw>'), 'Too slow.']);
    const { agent, events } = testAgent({ provider, tools: [draw] });
    const running = agent.run('Draw.');
    await vi.advanceTimersByTimeAsync(1_000);
    const result = await running;
    expect(result.reason).toBe('final_answer');
    expect(seen[0]!.aborted).toBe(true);
    expect(toolTrace(events)).toEqual([
      'tool.started:tester/1.1.1:draw',
      'tool.started:tester/1.1.1/1:wait_for_draw',
      'tool.failed:tester/1.1.1/1:wait_for_draw',
      'tool.failed:tester/1.1.1:draw',
    ]);
    expect(events.filter('tool.failed').map((event) => event.data.error.kind)).toEqual(['aborted', 'timeout']);
    expect(events.find('tool.zombie')).toBeUndefined();
  });

  it('delivers the failure of a skill whose body ignores its signal after the grace period, as a zombie', async () => {
    vi.useFakeTimers();
    const { tool } = waitingTool();
    const stubborn = defineSkill({
      name: 'stubborn',
      description: 'Ignores its signal.',
      parameters: noParameters,
      timeoutMs: 1_000,
      tools: [tool],
      run: () => new Promise(() => {}),
    });
    const provider = scriptedProvider([action('<stubborn></stubborn>'), 'It hung.']);
    const { agent, events } = testAgent({ provider, tools: [stubborn] });
    const running = agent.run('Go.');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(events.find('tool.failed')).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1_000);
    const result = await running;
    expect(result.reason).toBe('final_answer');
    expect(events.find('tool.failed')!.data.error.kind).toBe('timeout');
    expect(events.find('tool.zombie')!.data).toMatchObject({ callId: 'tester/1.1.1', settled: 'pending' });
  });

  it('gives a retried skill’s steps fresh ids, so no nested call id repeats', async () => {
    let calls = 0;
    const flaky = defineTool({
      name: 'fetch_odds',
      description: 'Fetches the odds.',
      parameters: noParameters,
      readOnly: true,
      execute: async () => {
        calls++;
        if (calls === 1) throw new ToolError('bookmaker unreachable', { kind: 'network' });
        return 2.5;
      },
    });
    const odds = defineSkill({
      name: 'odds',
      description: 'The odds.',
      parameters: noParameters,
      readOnly: true,
      retry: { attempts: 2, backoffMs: 0 },
      tools: [flaky],
      run: (_args, steps) => steps.call('fetch_odds'),
    });
    const provider = scriptedProvider([action('<odds></odds>'), '2.5']);
    const { agent, events } = testAgent({ provider, tools: [odds] });
    await agent.run('Odds?');
    expect(toolTrace(events)).toEqual([
      'tool.started:tester/1.1.1:odds',
      'tool.started:tester/1.1.1/1:fetch_odds',
      'tool.failed:tester/1.1.1/1:fetch_odds',
      'tool.failed:tester/1.1.1:odds',
      'tool.started:tester/1.1.1:odds',
      'tool.started:tester/1.1.1#2/1:fetch_odds',
      'tool.completed:tester/1.1.1#2/1:fetch_odds',
      'tool.completed:tester/1.1.1:odds',
    ]);
    // The step's network failure kept its kind, so the skill's retry policy applied.
    expect(events.filter('tool.failed')[1]!.data.error).toMatchObject({ kind: 'network', retryable: true });
  });
});
