import { APICallError, LoadAPIKeyError, UnsupportedFunctionalityError } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aiSdkProvider } from '../../src/llm/ai-sdk/index.js';
import { ProviderError } from '../../src/llm/provider-error.js';
import type { StreamEvent } from '../../src/llm/types.js';
import { collect, request, stallingStream, streamed, textParts } from './ai-sdk-helpers.js';

afterEach(() => {
  vi.useRealTimers();
});

/** An HTTP failure as `@ai-sdk/provider-utils` reports it: lower-case headers, the body as text. */
function httpError(statusCode: number, headers: Record<string, string> = {}, message = `HTTP ${statusCode}`): APICallError {
  return new APICallError({
    message,
    url: 'https://api.example.test/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    responseHeaders: { 'content-type': 'application/json', ...headers },
    responseBody: '{"error":{"message":"…"}}',
    isRetryable: statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500,
  });
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

/** Reads a stream to its end or failure, keeping what it showed first. */
async function streamFailure(events: AsyncIterable<StreamEvent>): Promise<{ shown: StreamEvent[]; error: ProviderError }> {
  const shown: StreamEvent[] = [];
  const error = await failure(
    (async () => {
      for await (const event of events) shown.push(event);
    })(),
  );
  return { shown, error };
}

const failing = (error: unknown) => new MockLanguageModelV3({ doGenerate: () => Promise.reject(error), doStream: () => Promise.reject(error) });

describe('aiSdkProvider: failures', () => {
  it('reports 429 as a retryable rate_limit with the retry-after the server asked for', async () => {
    const error = await failure(aiSdkProvider(failing(httpError(429, { 'retry-after': '2' }, 'Rate limit reached'))).complete(request()));
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, retryAfterMs: 2_000, status: 429 });
    expect(error.message).toBe('mock-provider: HTTP 429: Rate limit reached');
    // retry-after-ms wins, and a stream that fails to open reports the same way.
    const streamed = await failure(collect(aiSdkProvider(failing(httpError(429, { 'retry-after-ms': '750', 'retry-after': '9' }))).stream!(request())));
    expect(streamed).toMatchObject({ kind: 'rate_limit', retryAfterMs: 750 });
  });

  it.each([
    [500, 'server', true],
    [503, 'server', true],
    [408, 'timeout', true],
    [400, 'bad_request', false],
    [401, 'auth', false],
    [403, 'auth', false],
    [404, 'bad_request', false],
  ] as const)('classifies HTTP %i as %s', async (status, kind, retryable) => {
    expect(await failure(aiSdkProvider(failing(httpError(status))).complete(request()))).toMatchObject({ kind, retryable, status });
  });

  it('classifies the AI SDK errors that carry no status', async () => {
    const noKey = new LoadAPIKeyError({ message: 'OpenAI API key is missing. Pass it using the apiKey parameter or the OPENAI_API_KEY environment variable.' });
    expect(await failure(aiSdkProvider(failing(noKey)).complete(request()))).toMatchObject({ kind: 'auth', retryable: false, message: expect.stringMatching(/^mock-provider: OpenAI API key is missing/) });
    const unsupported = new UnsupportedFunctionalityError({ functionality: 'image parts in tool results' });
    expect(await failure(aiSdkProvider(failing(unsupported)).complete(request()))).toMatchObject({ kind: 'bad_request', retryable: false });
    // What provider-utils throws when fetch fails: no status, the socket's code two causes down.
    const refused = new APICallError({
      message: 'Cannot connect to API: fetch failed',
      url: 'http://127.0.0.1:9/v1/chat/completions',
      requestBodyValues: {},
      isRetryable: true,
      cause: Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }) }),
    });
    expect(await failure(aiSdkProvider(failing(refused)).complete(request()))).toMatchObject({ kind: 'network', retryable: true });
  });

  it('reports an answer that broke off while it was read (provider-utils says HTTP 200) as a retryable network error', async () => {
    const cut = new APICallError({
      message: 'Failed to process successful response',
      url: 'https://api.example.test/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 200,
      isRetryable: true,
      cause: new TypeError('terminated'),
    });
    expect(await failure(aiSdkProvider(failing(cut)).complete(request()))).toMatchObject({
      kind: 'network',
      retryable: true,
      message: 'mock-provider: the answer broke off while it was read (Failed to process successful response: terminated)',
    });
  });

  it('keeps key-like strings out of the messages', async () => {
    const error = await failure(aiSdkProvider(failing(httpError(401, {}, 'Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwx1234'))).complete(request()));
    expect(error.message).not.toContain('sk-proj-abcdefghijklmnopqrstuvwx1234');
  });
});

describe('aiSdkProvider: a stream that fails part-way', () => {
  it('fails on an error part, after the text it did show, as a retryable server error', async () => {
    const parts = textParts(['Player 7', ' is']).slice(0, 4);
    const model = new MockLanguageModelV3({ doStream: streamed([...parts, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]) });
    const { shown, error } = await streamFailure(aiSdkProvider(model).stream!(request()));
    expect(shown).toEqual([{ type: 'text', text: 'Player 7' }]);
    expect(error).toMatchObject({ kind: 'server', retryable: true, message: "mock-provider: the model's stream reported an error: overloaded_error: Overloaded" });
  });

  it('classifies an error part that carries an HTTP status like any HTTP failure', async () => {
    const model = new MockLanguageModelV3({ doStream: streamed([{ type: 'stream-start', warnings: [] }, { type: 'error', error: httpError(429, { 'retry-after': '4' }) }]) });
    expect((await streamFailure(aiSdkProvider(model).stream!(request()))).error).toMatchObject({ kind: 'rate_limit', retryAfterMs: 4_000 });
  });

  it('reports an error part saying the answer broke off (HTTP 200) as network, not as the status', async () => {
    const cut = new APICallError({ message: 'Failed to process successful response', url: 'https://api.example.test/v1', requestBodyValues: {}, statusCode: 200 });
    const model = new MockLanguageModelV3({ doStream: streamed([{ type: 'stream-start', warnings: [] }, { type: 'error', error: cut }]) });
    expect((await streamFailure(aiSdkProvider(model).stream!(request()))).error).toMatchObject({ kind: 'network', retryable: true });
  });

  it('fails a stream that ends without its finish part as network, never a short answer', async () => {
    const model = new MockLanguageModelV3({ doStream: streamed(textParts(['Player 7 is']).slice(0, -1)) });
    const { shown, error } = await streamFailure(aiSdkProvider(model).stream!(request()));
    expect(shown).toEqual([{ type: 'text', text: 'Player 7 is' }]);
    expect(error).toMatchObject({ kind: 'network', retryable: true, message: 'mock-provider: the stream ended before the model finished (connection cut)' });
  });

  it('fails a stream whose connection is cut as network', async () => {
    let sent = false;
    const stream = new ReadableStream({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue({ type: 'text-delta', id: '0', delta: 'I will <ACTION><look' });
          return;
        }
        // What undici throws when the socket closes under a response body.
        controller.error(Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }));
      },
    });
    const { error } = await streamFailure(aiSdkProvider(new MockLanguageModelV3({ doStream: { stream } })).stream!(request()));
    expect(error).toMatchObject({ kind: 'network', retryable: true });
  });
});

describe('aiSdkProvider: abort and silence', () => {
  it('reports an abort mid-stream as aborted and cancels the model stream, even when the model ignores its signal', async () => {
    const { result, cancelled } = stallingStream(textParts(['Player 7']).slice(0, 4));
    const controller = new AbortController();
    const events = aiSdkProvider(new MockLanguageModelV3({ doStream: result })).stream!(request({ signal: controller.signal }));
    const shown: StreamEvent[] = [];
    const error = failure(
      (async () => {
        for await (const event of events) {
          shown.push(event);
          controller.abort();
        }
      })(),
    );
    expect(await error).toMatchObject({ kind: 'aborted', retryable: false });
    expect(shown).toEqual([{ type: 'text', text: 'Player 7' }]);
    expect(cancelled()).toBe(true);
  });

  it('reports an abort of a waiting complete as aborted', async () => {
    const controller = new AbortController();
    const model = new MockLanguageModelV3({ doGenerate: () => new Promise(() => undefined) });
    const pending = aiSdkProvider(model).complete(request({ signal: controller.signal }));
    controller.abort();
    expect(await failure(pending)).toMatchObject({ kind: 'aborted' });
    expect(model.doGenerateCalls[0]!.abortSignal!.aborted).toBe(true);
  });

  it('times out a hung answer and a stream that goes silent part-way', async () => {
    vi.useFakeTimers();
    const hung = aiSdkProvider(new MockLanguageModelV3({ doGenerate: () => new Promise(() => undefined) }), { timeoutMs: 1_000 }).complete(request());
    const hungFailure = failure(hung);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await hungFailure).toMatchObject({ kind: 'timeout', retryable: true, message: 'mock-provider: no answer within 1000 ms' });

    const { result, cancelled } = stallingStream(textParts(['Player 7']).slice(0, 4));
    const silent = streamFailure(aiSdkProvider(new MockLanguageModelV3({ doStream: result }), { timeoutMs: 1_000 }).stream!(request()));
    await vi.advanceTimersByTimeAsync(1_000);
    const { shown, error } = await silent;
    expect(shown).toEqual([{ type: 'text', text: 'Player 7' }]);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(cancelled()).toBe(true);
  });
});
