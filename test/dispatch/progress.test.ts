import { describe, expect, it } from 'vitest';
import { createAgent, defineTool, scriptedProvider, type ToolContext } from '../../src/index.js';
import { recordEvents } from '../../src/testing/index.js';

/** A tool that reports three steps, then answers; it keeps its context to report once more later. */
function stepper(kept: { context?: ToolContext }) {
  return defineTool({
    name: 'steps',
    description: 'Does three steps.',
    parameters: { type: 'object', properties: {} },
    execute: async (_args, context) => {
      kept.context = context;
      for (let step = 1; step <= 3; step++) {
        await Promise.resolve();
        context.progress?.({ progress: step, total: 3, message: `step ${step}` });
      }
      return 'done';
    },
  });
}

describe('context.progress', () => {
  it('publishes tool.progress between tool.started and tool.completed, caused by the attempt', async () => {
    const kept: { context?: ToolContext } = {};
    const agent = createAgent({ name: 'worker', tools: [stepper(kept)], provider: scriptedProvider(['<ACTION><steps></steps></ACTION>', 'Done.']) });
    const events = recordEvents(agent.bus);
    await agent.run('go');

    const started = events.find('tool.started')!;
    const progress = events.filter('tool.progress');
    expect(progress.map((event) => event.data)).toEqual([1, 2, 3].map((step) => ({ callId: started.data.callId, name: 'steps', progress: step, total: 3, message: `step ${step}` })));
    expect(progress.every((event) => event.cause === started.id && event.agent === 'worker')).toBe(true);
    const types = events.types().filter((type) => type.startsWith('tool.'));
    expect(types).toEqual(['tool.started', 'tool.progress', 'tool.progress', 'tool.progress', 'tool.completed']);

    // A report after the call ended reaches nobody.
    kept.context!.progress?.({ progress: 4 });
    expect(events.filter('tool.progress')).toHaveLength(3);
  });

  it('fails the call when the report is not a number, and cuts long messages', async () => {
    const tool = defineTool({
      name: 'odd',
      description: 'Reports oddly.',
      parameters: { type: 'object', properties: { bad: { type: 'boolean' } } },
      execute: async ({ bad }, context) => {
        context.progress?.({ progress: 1, total: Number.NaN, message: 'x'.repeat(5_000) });
        if (bad === true) context.progress?.({ progress: Number.NaN });
        return 'ok';
      },
    });
    const agent = createAgent({
      name: 'worker',
      tools: [tool],
      provider: scriptedProvider(['<ACTION><odd><bad>true</bad></odd></ACTION>', 'Oh.']),
    });
    const events = recordEvents(agent.bus);
    await agent.run('go');
    const [first] = events.filter('tool.progress');
    expect(first!.data).toEqual({ callId: 'worker/1.1.1', name: 'odd', progress: 1, message: `${'x'.repeat(1_000)}…` });
    expect(events.find('tool.failed')!.data.error).toMatchObject({ kind: 'execution', message: expect.stringContaining('context.progress needs { progress: number') });
  });

  it('is absent from a copy of the context', async () => {
    let copied: Partial<ToolContext> | undefined;
    const tool = defineTool({
      name: 'copy',
      description: 'Copies its context.',
      parameters: { type: 'object', properties: {} },
      execute: (_args, context) => {
        copied = { ...context };
        return typeof context.progress;
      },
    });
    const agent = createAgent({ name: 'worker', tools: [tool], provider: scriptedProvider(['<ACTION><copy></copy></ACTION>', 'Ok.']) });
    const events = recordEvents(agent.bus);
    await agent.run('go');
    expect(events.find('tool.completed')!.data.output).toBe('function');
    expect(copied?.progress).toBeUndefined();
  });
});
