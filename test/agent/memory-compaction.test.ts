import { describe, expect, it, vi } from 'vitest';
import { Budget, dropOldest, summarizeOldest, type Provider } from '../../src/index.js';
import { type CompactionPolicy } from '../../src/agent/memory/index.js';
import { deferred, scriptedProvider, testAgent } from '../../src/testing/index.js';

/** Counts one token per word: budgets in these tests are easy to reason about. */
const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** Replies of ten words each. */
const reply = (index: number): string => `Reply ${index} has exactly ten words in it, no more.`;

describe('compaction', () => {
  it('drops the oldest turns once the history exceeds its budget, with a bus event', async () => {
    // Each turn: user (4 + 2 words) + assistant (4 + 10 words) = 20 tokens.
    const provider = scriptedProvider([reply(1), reply(2), reply(3), reply(4)]);
    const { agent, events } = testAgent({ provider, memory: { maxTokens: 50, countTokens: words } });
    for (let index = 1; index <= 4; index++) {
      await agent.run(`Question ${index}`);
      expect(agent.memory!.tokens()).toBeLessThanOrEqual(50);
    }
    const compacted = events.filter('memory.compacted').map((event) => event.data);
    expect(compacted).toEqual([
      { policy: 'drop-oldest', beforeTokens: 60, afterTokens: 40, maxTokens: 50, turnsDropped: 1, turnsSummarized: 0, turnsKept: 2, fallback: false },
      { policy: 'drop-oldest', beforeTokens: 60, afterTokens: 40, maxTokens: 50, turnsDropped: 1, turnsSummarized: 0, turnsKept: 2, fallback: false },
    ]);
    expect(agent.memory!.messages().filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['Question 3', 'Question 4']);
    // The event follows from the run and comes before its agent.finished.
    const types = events.types();
    expect(types.lastIndexOf('memory.compacted')).toBe(types.lastIndexOf('agent.finished') - 1);
    expect(events.filter('memory.compacted')[0]!.agent).toBe('tester');
  });

  it('drops even the latest turn when it alone exceeds the budget', async () => {
    const provider = scriptedProvider([reply(1)]);
    const { agent, events } = testAgent({ provider, memory: { maxTokens: 10, countTokens: words } });
    await agent.run('Question 1');
    expect(agent.memory!.turns()).toEqual([]);
    expect(events.find('memory.compacted')!.data).toMatchObject({ beforeTokens: 20, afterTokens: 0, turnsDropped: 1, turnsKept: 0 });
  });

  it('summarizes older turns with a function, keeping the recent ones', async () => {
    const provider = scriptedProvider([reply(1), reply(2), reply(3), reply(4)]);
    const seen: string[][] = [];
    const policy = summarizeOldest({
      keepRecent: 1,
      summarize: (messages) => {
        seen.push(messages.map((message) => message.content));
        return 'They asked questions.';
      },
    });
    const { agent, events } = testAgent({ provider, memory: { maxTokens: 50, countTokens: words, compaction: policy } });
    for (let index = 1; index <= 4; index++) await agent.run(`Question ${index}`);
    expect(seen[0]).toEqual(['Question 1', reply(1), 'Question 2', reply(2)]);
    const compacted = events.filter('memory.compacted').map((event) => event.data);
    expect(compacted[0]).toMatchObject({ policy: 'summarize-oldest', beforeTokens: 60, turnsSummarized: 2, turnsDropped: 0, fallback: false });
    const request = provider.requests[3]!.messages;
    // No instructions and no tools: the summary opens the request.
    expect(request[0]).toEqual({ role: 'system', content: 'Summary of the earlier conversation (written by the runtime):\nThey asked questions.' });
    expect(request.at(-1)).toEqual({ role: 'user', content: 'Question 4' });
    expect(agent.memory!.turns()[0]!.summary).toBe(true);
    expect(agent.memory!.tokens()).toBeLessThanOrEqual(50);
  });

  it('summarizes with a model, and the run resolves once the summary is kept', async () => {
    const summarizer = scriptedProvider(['Ana asked two questions.']);
    const provider = scriptedProvider([reply(1), reply(2), reply(3)]);
    const { agent, events } = testAgent({
      provider,
      memory: { maxTokens: 50, countTokens: words, compaction: summarizeOldest({ summarize: summarizer }) },
    });
    for (let index = 1; index <= 3; index++) await agent.run(`Question ${index}`);
    // Resolved: the summary is already in place.
    expect(agent.memory!.messages()[0]!.content).toContain('Ana asked two questions.');
    const asked = summarizer.requests[0]!.messages;
    expect(asked[0]!.role).toBe('system');
    expect(asked[1]!.content).toContain(`user: Question 1\n\nassistant: ${reply(1)}`);
    expect(events.find('memory.compacted')!.data).toMatchObject({ policy: 'summarize-oldest', turnsSummarized: 2, turnsKept: 2 });
    summarizer.assertConsumed();
  });

  it("charges a summarizing model's call and tokens to the agent's budgets", async () => {
    const summarizer = scriptedProvider([{ text: 'Ana asked two questions.', usage: { inputTokens: 30, outputTokens: 5, totalTokens: 35 } }]);
    const provider = scriptedProvider([reply(1), reply(2), reply(3), reply(4)]);
    const budget = new Budget('agent', { modelCalls: 4 });
    const { agent } = testAgent({ provider, budget, memory: { maxTokens: 50, countTokens: words, compaction: summarizeOldest({ summarize: summarizer }) } });
    let deliberated = 0;
    for (let index = 1; index <= 3; index++) deliberated += (await agent.run(`Question ${index}`)).usage.totalTokens;
    expect(budget.usage()).toMatchObject({ modelCalls: 4, tokens: deliberated + 35 });
    // Three deliberations and one summary: the fourth run has no model call left.
    expect((await agent.run('Question 4')).reason).toBe('budget');
  });

  it('aborts a summarizing model call when the agent closes, and when clear() discards its compaction', async () => {
    const signals: AbortSignal[] = [];
    const hanging: Provider = {
      name: 'hanging',
      complete: (request) =>
        new Promise((_resolve, reject) => {
          signals.push(request.signal);
          request.signal.addEventListener('abort', () => reject(request.signal.reason as Error), { once: true });
        }),
    };
    for (const stop of ['clear', 'close'] as const) {
      const provider = scriptedProvider([reply(1), reply(2), reply(3)]);
      const { agent } = testAgent({ provider, memory: { maxTokens: 50, countTokens: words, compaction: summarizeOldest({ summarize: hanging }) } });
      await agent.run('Question 1');
      await agent.run('Question 2');
      const third = agent.run('Question 3');
      await vi.waitFor(() => expect(signals).toHaveLength(stop === 'clear' ? 1 : 2));
      const signal = signals.at(-1)!;
      expect(signal.aborted).toBe(false);
      if (stop === 'clear') agent.memory!.clear();
      else await agent.close();
      expect(signal.aborted).toBe(true);
      expect((await third).reason).toBe('final_answer');
    }
  });

  it('takes a custom policy and holds the budget after it', async () => {
    // Keeps only the turns whose question mentions "keep"; never drops the latest.
    const keepMarked: CompactionPolicy = {
      name: 'keep-marked',
      compact: ({ turns }) => {
        const kept = turns.filter((turn, index) => index === turns.length - 1 || turn.messages[0]!.content.includes('keep'));
        return { turns: kept, dropped: turns.length - kept.length, summarized: 0 };
      },
    };
    const provider = scriptedProvider([reply(1), reply(2), reply(3), reply(4)]);
    const { agent, events } = testAgent({ provider, memory: { maxTokens: 50, countTokens: words, compaction: keepMarked } });
    await agent.run('please keep this');
    await agent.run('drop this');
    await agent.run('and this');
    await agent.run('last one');
    const data = events.filter('memory.compacted').map((event) => event.data);
    expect(data[0]).toMatchObject({ policy: 'keep-marked', turnsDropped: 1, fallback: false, turnsKept: 2 });
    expect(agent.memory!.messages().filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['please keep this', 'last one']);
  });

  it('falls back to dropping the oldest turns when a policy fails, and says so', async () => {
    const broken: CompactionPolicy = {
      name: 'broken',
      compact: () => {
        throw new Error('no summaries today');
      },
    };
    const provider = scriptedProvider([reply(1), reply(2), reply(3)]);
    const { agent, events } = testAgent({ provider, memory: { maxTokens: 50, countTokens: words, compaction: broken } });
    for (let index = 1; index <= 3; index++) await agent.run(`Question ${index}`);
    expect(events.find('memory.compacted')!.data).toMatchObject({ policy: 'broken', fallback: true, turnsDropped: 1, error: 'no summaries today' });
    expect(agent.memory!.tokens()).toBeLessThanOrEqual(50);
  });

  it('applies a slow policy to the turns it was given, keeping a turn added meanwhile', async () => {
    const gate = deferred<void>();
    const slow: CompactionPolicy = {
      name: 'slow',
      compact: async (request) => {
        await gate.promise;
        return dropOldest().compact(request);
      },
    };
    const provider = scriptedProvider([reply(1), reply(2), reply(3), reply(4)]);
    const { agent, events } = testAgent({ provider, memory: { maxTokens: 50, countTokens: words, compaction: slow } });
    await agent.run('Question 1');
    await agent.run('Question 2');
    let finished = deferred<void>();
    const stop = agent.bus.on('agent.finished', () => finished.resolve());
    const third = agent.run('Question 3');
    await finished.promise;
    // Run 3 has ended and joined the history; its compaction waits on the gate, and so does its result.
    expect(agent.memory!.turns()).toHaveLength(3);
    expect(events.filter('memory.compacted')).toEqual([]);
    // The agent is free: a fourth run ends while the compaction still runs (its result waits too).
    finished = deferred<void>();
    const fourth = agent.run('Question 4');
    await finished.promise;
    stop();
    expect(agent.memory!.turns()).toHaveLength(4);
    gate.resolve();
    await Promise.all([third, fourth]);
    await agent.memory!.settled();
    // The policy dropped turn 1 of the three it saw; turn 4 stayed, and the budget dropped turn 2 after it.
    expect(events.filter('memory.compacted').map((event) => event.data)).toEqual([
      { policy: 'slow', beforeTokens: 60, afterTokens: 40, maxTokens: 50, turnsDropped: 2, turnsSummarized: 0, turnsKept: 2, fallback: true },
    ]);
    expect(agent.memory!.messages().filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['Question 3', 'Question 4']);
  });

  it('discards a compaction that finishes after clear()', async () => {
    const gate = deferred<void>();
    const slow: CompactionPolicy = { name: 'slow', compact: async (request) => (await gate.promise, dropOldest().compact(request)) };
    const provider = scriptedProvider([reply(1), reply(2), reply(3)]);
    const { agent, events } = testAgent({ provider, memory: { maxTokens: 50, countTokens: words, compaction: slow } });
    await agent.run('Question 1');
    await agent.run('Question 2');
    const stop = agent.bus.on('agent.finished', () => {
      // Run 3 has joined the history and its compaction is waiting.
      expect(agent.memory!.turns()).toHaveLength(3);
      agent.memory!.clear();
      gate.resolve();
    });
    await agent.run('Question 3');
    stop();
    await agent.memory!.settled();
    expect(agent.memory!.turns()).toEqual([]);
    expect(events.filter('memory.compacted')).toEqual([]);
  });
});
