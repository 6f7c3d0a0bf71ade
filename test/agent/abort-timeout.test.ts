import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineTool } from '../../src/index.js';
import { deferred, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call } from './fixtures.js';

afterEach(() => {
  vi.useRealTimers();
});

function hangingTool(options: { timeoutMs?: number; honoursSignal?: boolean } = {}) {
  const started = deferred();
  const seen: AbortSignal[] = [];
  const tool = defineTool({
    name: 'slow_scan',
    description: 'Scans slowly.',
    parameters: { type: 'object', properties: { area: { type: 'string', maxLength: 32 } } },
    readOnly: true,
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    execute: (_args, { signal }) => {
      seen.push(signal);
      started.resolve();
      return new Promise((_resolve, reject) => {
        if (options.honoursSignal !== false) signal.addEventListener('abort', () => reject(signal.reason));
      });
    },
  });
  return { tool, started, seen };
}

describe('timeouts and aborts', () => {
  it('times out a tool that never settles and lets the model carry on', async () => {
    vi.useFakeTimers();
    const { tool, seen } = hangingTool({ timeoutMs: 5_000 });
    const provider = scriptedProvider([action(call('slow_scan', { area: 'north' })), 'The scan timed out.']);
    const { agent, events } = testAgent({ provider, tools: [tool] });
    const running = agent.run('Scan the north.');
    await vi.advanceTimersByTimeAsync(5_000);
    const result = await running;
    expect(result.reason).toBe('final_answer');
    expect(seen[0]!.aborted).toBe(true);
    expect(events.find('tool.failed')!.data.error).toMatchObject({ kind: 'timeout' });
    expect(events.find('agent.observation')!.data.text).toMatch(/slow_scan .* failed .*timeout/);
    expect(result.calls[0]).toMatchObject({ outcome: 'failed' });
  });

  it('aborts mid-dispatch: the running signal fires and the run ends aborted', async () => {
    const { tool, started, seen } = hangingTool();
    const provider = scriptedProvider([action(call('slow_scan', { area: 'north' })), 'unused']);
    const { agent, events } = testAgent({ provider, tools: [tool] });
    const running = agent.run('Scan.');
    await started.promise;
    agent.abort('stop scanning');
    const result = await running;
    expect(result.reason).toBe('aborted');
    expect(seen[0]!.aborted).toBe(true);
    expect(events.find('tool.failed')!.data.error.kind).toBe('aborted');
    // The tool's failure is reported before the run ends.
    const types = events.types();
    expect(types.indexOf('tool.failed')).toBeLessThan(types.indexOf('agent.finished'));
    expect(provider.remaining).toBe(1);
  });

  it('aborts through the caller signal while the model is thinking', async () => {
    const thinking = deferred<string>();
    const provider = scriptedProvider(async () => thinking.promise);
    const { agent } = testAgent({ provider });
    const controller = new AbortController();
    const running = agent.run('hi', { signal: controller.signal });
    controller.abort();
    await expect(running).resolves.toMatchObject({ reason: 'aborted' });
    thinking.resolve('too late');
    // A late answer after abort changes nothing and the agent can run again.
    expect(agent.state).toBe('done');
  });

  it('an already-aborted signal ends the run at once, asking the model nothing', async () => {
    const provider = scriptedProvider(['never']);
    const { agent, events } = testAgent({ provider });
    const result = await agent.run('hi', { signal: AbortSignal.abort() });
    expect(result).toMatchObject({ reason: 'aborted', error: 'aborted before it started' });
    expect(provider.requests).toHaveLength(0);
    expect(events.types()).not.toContain('llm.request');
  });

  it('leaves no listener on a caller signal shared by many runs', async () => {
    const provider = scriptedProvider(['a', 'b', 'c']);
    const { agent } = testAgent({ provider });
    const shared = new AbortController();
    for (const input of ['1', '2', '3']) await agent.run(input, { signal: shared.signal });
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('gives the next run a live signal after an aborted one', async () => {
    const seen: AbortSignal[] = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Looks at its signal.',
      parameters: { type: 'object', properties: {} },
      readOnly: true,
      execute: (_args, { signal }) => {
        seen.push(signal);
        return signal.aborted ? 'aborted' : 'live';
      },
    });
    const provider = scriptedProvider(['<ACTION><probe/></ACTION>', 'done']);
    const { agent, events } = testAgent({ provider, tools: [probe] });
    await agent.run('first', { signal: AbortSignal.abort() });
    const second = await agent.run('second');
    expect(second.reason).toBe('final_answer');
    expect(events.find('tool.completed')!.data.output).toBe('live');
    expect(seen[0]!.aborted).toBe(false);
  });
});
