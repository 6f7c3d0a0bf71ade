import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, createAgent } from '../../src/index.js';
import { openaiProvider } from '../../src/llm/openai/index.js';
import { retryAfter } from '../../src/llm/classify-failure.js';
import { recordEvents, scriptedProvider, testAgent } from '../../src/testing/index.js';
import { startWireServer, type WireServer } from '../llm/wire-server.js';
import { completion, RATE_LIMITED } from '../llm/transcripts/openai.js';

afterEach(() => {
  vi.useRealTimers();
});

const NOW = Date.parse('2030-06-01T12:00:00Z');

describe('retryAfter reads what a server asked for', () => {
  it.each([
    [{ 'retry-after': '3600' }, 3_600_000],
    [{ 'retry-after': '0.25' }, 250],
    [{ 'retry-after': '0' }, 0],
    [{ 'retry-after': '99999999' }, 99_999_999_000],
    [{ 'retry-after': '1e400' }, Number.POSITIVE_INFINITY],
    [{ 'retry-after': 'Infinity' }, Number.POSITIVE_INFINITY],
    [{ 'retry-after': 'Sat, 01 Jun 2030 12:00:30 GMT' }, 30_000],
    [{ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }, Date.parse('9999-12-31T23:59:59Z') - NOW],
    [{ 'retry-after-ms': '1500', 'retry-after': '7' }, 1_500],
    // A retry-after-ms that is no wait falls back to retry-after.
    [{ 'retry-after-ms': '-1', 'retry-after': '7' }, 7_000],
  ])('%j → %d ms', (headers, ms) => {
    expect(retryAfter(headers, NOW)).toBe(ms);
  });

  it.each([
    [{ 'retry-after': '-5' }],
    [{ 'retry-after': 'NaN' }],
    [{ 'retry-after': '' }],
    [{ 'retry-after': 'soon' }],
    [{ 'retry-after': 'Sat, 01 Jun 2030 11:59:00 GMT' }], // a date already past: clocks disagree
    [{ 'retry-after-ms': 'NaN' }],
  ])('%j → no wait given (the backoff applies)', (headers) => {
    expect(retryAfter(headers, NOW)).toBeUndefined();
  });
});

describe('an agent honours retry-after up to modelRetry.maxRetryAfterMs', () => {
  const limited = (retryAfterMs: number) => ({ error: { kind: 'rate_limit' as const, message: '429 Too Many Requests', retryAfterMs } });

  it('fails at once, with an llm.error that says why, when a provider asks for an hour (default cap 1 min)', async () => {
    vi.useFakeTimers();
    const provider = scriptedProvider([limited(3_600_000)]);
    const { agent, events } = testAgent({ provider });
    const result = await agent.run('hi');
    expect(result.reason).toBe('error');
    expect(provider.requests).toHaveLength(1);
    expect(events.filter('llm.error')).toHaveLength(1);
    const message = '429 Too Many Requests (the provider asked to wait 1 h before another try, more than modelRetry.maxRetryAfterMs allows, 1 min: not retried)';
    expect(events.find('llm.error')!.data).toEqual({ round: 1, kind: 'rate_limit', message, retryable: false, attempt: 1 });
    expect(result.error).toContain(message);
    // Nothing was slept.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a wait too long for a timer (99,999,999 s) burns no attempts: it fails the same way', async () => {
    vi.useFakeTimers();
    const provider = scriptedProvider([limited(99_999_999_000)]);
    const { agent, events } = testAgent({ provider, modelRetry: { attempts: 5 } });
    const result = await agent.run('hi');
    expect(result.reason).toBe('error');
    expect(provider.requests).toHaveLength(1);
    expect(events.find('llm.error')!.data.message).toMatch(/asked to wait 1,157\.4 d before another try/);
  });

  it('waits exactly as long as asked within the cap, and the cap can be raised', async () => {
    vi.useFakeTimers();
    const provider = scriptedProvider([limited(3_600_000), 'Back.']);
    const { agent } = testAgent({ provider, modelRetry: { maxRetryAfterMs: 7_200_000 } });
    const running = agent.run('hi');
    await vi.advanceTimersByTimeAsync(3_599_999);
    expect(provider.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await expect(running).resolves.toMatchObject({ reason: 'final_answer', text: 'Back.' });
  });

  it('takes a negative or NaN wait for none: the backoff applies', async () => {
    vi.useFakeTimers();
    for (const bad of [-5_000, Number.NaN]) {
      const provider = scriptedProvider([limited(bad), 'Back.']);
      const { agent } = testAgent({ provider, modelRetry: { backoffMs: 100 } });
      const running = agent.run('hi');
      await vi.advanceTimersByTimeAsync(100);
      await expect(running).resolves.toMatchObject({ reason: 'final_answer' });
      expect(provider.requests).toHaveLength(2);
    }
  });

  it('refuses caps and backoffs a timer cannot hold, or that are no number of ms', () => {
    const provider = scriptedProvider([]);
    for (const modelRetry of [{ maxRetryAfterMs: -1 }, { maxRetryAfterMs: Number.NaN }, { maxRetryAfterMs: 2 ** 31 }, { maxBackoffMs: 1e12 }, { backoffMs: Number.POSITIVE_INFINITY }]) {
      expect(() => createAgent({ name: 'a', provider, modelRetry }), JSON.stringify(modelRetry)).toThrow(ConfigError);
    }
    expect(() => createAgent({ name: 'a', provider, modelRetry: { maxRetryAfterMs: 2 ** 31 } })).toThrow(
      'createAgent "a": modelRetry.maxRetryAfterMs must be a number of ms from 0 to 2147483647 (about 24.8 days), got 2147483648',
    );
  });
});

describe('retry-after from a real HTTP server, through the OpenAI client', () => {
  let server: WireServer;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await server.close();
  });

  it('an hour fails the run at once with one request; thirty seconds are waited and the retry answers', async () => {
    server = await startWireServer();
    vi.stubEnv('OPENAI_API_KEY', '');
    vi.stubEnv('OPENAI_BASE_URL', '');
    const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-test-retry-1a2b3c4d', baseURL: `${server.url}/v1`, timeoutMs: 5_000 });
    server.reply({ kind: 'json', status: 429, headers: { 'retry-after': '3600' }, body: RATE_LIMITED });
    const agent = createAgent({ name: 'referee', provider, stream: false });
    const events = recordEvents(agent.bus);
    const result = await agent.run('Who is player 7?');
    expect(result.reason).toBe('error');
    expect(server.requests).toHaveLength(1);
    expect(events.find('llm.error')!.data.message).toMatch(/HTTP 429: .*\(the provider asked to wait 1 h before another try, more than modelRetry\.maxRetryAfterMs allows, 1 min: not retried\)$/);

    // Fake only the clock of the wait, after the client is up: its sockets need real time.
    server.reply({ kind: 'json', status: 429, headers: { 'retry-after': '30' }, body: RATE_LIMITED }, { kind: 'json', body: completion({ content: 'Ana.' }, 'stop') });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const running = agent.run('Who is player 7?');
    await vi.waitFor(() => expect(server.requests).toHaveLength(2), { interval: 5, timeout: 5_000 });
    await vi.advanceTimersByTimeAsync(30_000);
    vi.useRealTimers();
    await expect(running).resolves.toMatchObject({ reason: 'final_answer', text: 'Ana.' });
    expect(server.requests).toHaveLength(3);
  });
});
