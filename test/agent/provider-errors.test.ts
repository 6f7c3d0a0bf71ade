import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Provider } from '../../src/index.js';
import { scriptedProvider, testAgent } from '../../src/testing/index.js';
import { action, call, rosterTools } from './fixtures.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('provider failures', () => {
  it('waits as told by retry-after, then succeeds', async () => {
    vi.useFakeTimers();
    const provider = scriptedProvider([
      { error: { kind: 'rate_limit', message: '429 Too Many Requests', retryAfterMs: 7_000 } },
      'Hello.',
    ]);
    const { agent, events } = testAgent({ provider });
    const running = agent.run('hi');
    await vi.advanceTimersByTimeAsync(6_999);
    expect(provider.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(running).resolves.toMatchObject({ reason: 'final_answer', text: 'Hello.' });
    expect(events.find('llm.error')!.data).toMatchObject({ kind: 'rate_limit', retryable: true, attempt: 1 });
  });

  it('backs off with jitter: between half and all of the exponential step, drawn from the seeded generator', async () => {
    vi.useFakeTimers();
    const retryAt = async (seed: number): Promise<number> => {
      const provider = scriptedProvider([{ error: { kind: 'server', message: '502' } }, 'Back.']);
      const { agent } = testAgent({ provider, modelRetry: { attempts: 2, backoffMs: 1_000 }, seed });
      const running = agent.run('hi');
      let waited = 0;
      for (; provider.requests.length < 2 && waited <= 1_000; waited++) await vi.advanceTimersByTimeAsync(1);
      await expect(running).resolves.toMatchObject({ reason: 'final_answer', text: 'Back.' });
      return waited;
    };
    const waits = [await retryAt(1), await retryAt(2), await retryAt(3)];
    for (const waited of waits) {
      expect(waited).toBeGreaterThanOrEqual(500);
      expect(waited).toBeLessThanOrEqual(1_000);
    }
    // Jitter spreads agents apart, and the same seed waits the same.
    expect(new Set(waits).size).toBeGreaterThan(1);
    expect(await retryAt(2)).toBe(waits[1]);
  });

  it('fails the run with a clear llm.error after the retry limit', async () => {
    vi.useFakeTimers();
    const failure = { error: { kind: 'server' as const, message: '503 overloaded' } };
    const provider = scriptedProvider([failure, failure, failure]);
    const { agent, events } = testAgent({ provider, modelRetry: { attempts: 3, backoffMs: 100 } });
    const running = agent.run('hi');
    await vi.advanceTimersByTimeAsync(100 + 200);
    const result = await running;
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(/503 overloaded/);
    expect(events.filter('llm.error').map((event) => event.data.attempt)).toEqual([1, 2, 3]);
    expect(events.filter('agent.state').at(-1)!.data.to).toBe('failed');
  });

  it('does not retry a non-retryable error', async () => {
    const provider = scriptedProvider([{ error: { kind: 'auth', message: '401 bad key' } }]);
    const { agent, events } = testAgent({ provider });
    const result = await agent.run('hi');
    expect(result.reason).toBe('error');
    expect(events.filter('llm.error')).toHaveLength(1);
    expect(events.find('llm.error')!.data.retryable).toBe(false);
  });

  it('an exhausted script fails the run instead of hanging', async () => {
    const provider = scriptedProvider([action(call('lookup_player', { player_id: '7' }))]);
    const { agent, events } = testAgent({ provider, tools: rosterTools().tools });
    const result = await agent.run('Who is 7?');
    expect(result.reason).toBe('error');
    expect(events.find('llm.error')!.data).toMatchObject({ kind: 'script', retryable: false });
    expect(result.error).toMatch(/only 1 turn/);
  });

  it('survives a provider that throws synchronously or rejects with a non-Error', async () => {
    const throwing: Provider = {
      name: 'broken',
      complete() {
        throw 'socket gone';
      },
    };
    const { agent } = testAgent({ provider: throwing, modelRetry: { attempts: 1 } });
    const result = await agent.run('hi');
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(/socket gone/);
  });

  it('keeps the process alive when a stage throws inside the machine', async () => {
    const provider = scriptedProvider(['hello']);
    let exploded = false;
    Object.defineProperty(provider, 'name', {
      get() {
        if (exploded) return 'scripted';
        exploded = true;
        throw new Error('provider name exploded');
      },
    });
    const { agent, events } = testAgent({ provider });
    const result = await agent.run('hi');
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(/provider name exploded/);
    expect(events.find('agent.finished')!.data.reason).toBe('error');
    // The agent stays usable: a fresh actor serves the next run.
    await expect(agent.run('hi again')).resolves.toMatchObject({ reason: 'final_answer', text: 'hello' });
  });

  it('with xml protocol, ignores native tool calls the provider sent anyway', async () => {
    const { tools, executed } = rosterTools();
    const provider = scriptedProvider([
      { text: 'Just text.', toolCalls: [{ id: 'x', name: 'lookup_player', arguments: '{"player_id":"7"}' }] },
    ]);
    const { agent } = testAgent({ provider, tools });
    const result = await agent.run('hi');
    expect(result).toMatchObject({ reason: 'final_answer', text: 'Just text.' });
    expect(executed).toEqual([]);
  });
});
