import { afterEach, describe, expect, it } from 'vitest';
import { createScene, defineTool, type ModelRequest, type Provider } from '../../src/index.js';
import { deferred, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call } from './fixtures.js';

/** Counts the AbortControllers made while `count` runs, by standing in for the global constructor. */
const RealController = globalThis.AbortController;
let made = 0;
class CountedController extends RealController {
  constructor() {
    super();
    made++;
  }
}
function counting(): void {
  made = 0;
  globalThis.AbortController = CountedController;
}
afterEach(() => {
  globalThis.AbortController = RealController;
});

const tally = defineTool({
  name: 'tally',
  description: 'Adds one.',
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  execute: ({ n }) => n + 1,
});

/** A provider that hands each request to `seen` and answers when `answer` resolves. */
function waitingProvider(answer: Promise<string>, seen: ModelRequest[]): Provider {
  return {
    name: 'waiting',
    async complete(request) {
      seen.push(request);
      return { text: await answer, finishReason: 'stop' };
    },
  };
}

describe("a run's abort signal", () => {
  it('is not made while nothing asks for it: a scripted turn with a tool that answers at once makes no AbortController', async () => {
    const scene = createScene({ name: 'lazy', seed: 1, schedule: 'every-tick', clock: { mode: 'stepped' } });
    for (let index = 0; index < 3; index++) scene.add({ name: `npc-${index}`, brain: () => action(call('tally', { n: String(index) })), tools: [tally], rounds: 1 });
    await scene.start();
    counting();
    const report = await scene.step();
    expect(report.outcomes.turn_ended).toBe(3);
    expect(made).toBe(0);
    await scene.stop();
  });

  it('is made when a provider reads it, and the agent’s abort aborts it with the reason', async () => {
    const answer = deferred<string>();
    const seen: ModelRequest[] = [];
    const { agent } = testAgent({ provider: waitingProvider(answer.promise, seen) });
    counting();
    const running = agent.run('hi');
    await Promise.resolve();
    expect(made).toBe(0);
    const signal = seen[0]!.signal;
    expect(made).toBe(1);
    expect(signal.aborted).toBe(false);
    // The same signal on every read, and in a copy of the request.
    expect(seen[0]!.signal).toBe(signal);
    expect({ ...seen[0]! }.signal).toBe(signal);
    agent.abort('enough thinking');
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).message).toBe('enough thinking');
    answer.resolve('late');
    await expect(running).resolves.toMatchObject({ reason: 'aborted' });
  });

  it('is aborted already when first read after the abort', async () => {
    const answer = deferred<string>();
    const seen: ModelRequest[] = [];
    const { agent } = testAgent({ provider: waitingProvider(answer.promise, seen) });
    const running = agent.run('hi');
    await Promise.resolve();
    agent.abort('stopped before anyone listened');
    const signal = seen[0]!.signal;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).message).toBe('stopped before anyone listened');
    answer.resolve('late');
    await expect(running).resolves.toMatchObject({ reason: 'aborted' });
  });

  it('is not made by a scripted provider that records the request; the record still gives it', async () => {
    counting();
    const provider = scriptedProvider(['Done.']);
    const { agent } = testAgent({ provider });
    await agent.run('hi');
    expect(made).toBe(0);
    const [request] = provider.requests;
    // The record is the request as it was: its fields, the stop sequence included, and its signal.
    expect(request).toMatchObject({ round: 1, agent: agent.name, stop: ['</ACTION>'] });
    expect(request!.messages.at(-1)).toMatchObject({ role: 'user', content: 'hi' });
    expect(request!.signal).toBeInstanceOf(AbortSignal);
    expect(request!.signal.aborted).toBe(false);
  });

  it('reaches a tool that waits on it, though the dispatch made none for the tools that answered at once', async () => {
    const started = deferred();
    const seen: AbortSignal[] = [];
    const waits = defineTool({
      name: 'waits',
      description: 'Waits until stopped.',
      parameters: { type: 'object', properties: {} },
      execute: (_args, { signal }) => {
        seen.push(signal);
        started.resolve();
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
    });
    const provider = scriptedProvider([action(call('tally', { n: '1' }), call('waits', {})), 'unused']);
    const { agent, events } = testAgent({ provider, tools: [tally, waits] });
    const running = agent.run('Go.');
    await started.promise;
    agent.abort('stop waiting');
    const result = await running;
    expect(result.reason).toBe('aborted');
    expect(seen[0]!.aborted).toBe(true);
    expect(events.find('tool.completed')!.data.output).toBe(2);
    expect(events.find('tool.failed')!.data.error.kind).toBe('aborted');
  });
});
