import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/index.js';
import { adapter, ask, drain, KEY, SECOND_KEY } from './anthropic-helpers.js';
import * as wire from './transcripts/anthropic.js';
import { startWireServer, type WireServer } from './wire-server.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  expect(server.unexpected).toEqual([]);
  await server.close();
});

/** The ProviderError a call failed with (fails the test if it resolved). */
async function failureOf(pending: Promise<unknown>): Promise<ProviderError> {
  const outcome = await pending.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(ProviderError);
  return outcome as ProviderError;
}

/** A ProviderError's message and its causes' messages must never carry a key. */
function expectNoKey(error: ProviderError): void {
  for (const key of [KEY, SECOND_KEY]) expect(error.message).not.toContain(key);
}

describe('anthropicProvider: HTTP failures', () => {
  it('classifies 429 with retry-after as a retryable rate_limit that waits as told', async () => {
    server.reply(wire.rateLimited(7));
    const error = await failureOf(adapter(server).complete(ask()));
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, retryAfterMs: 7000, status: 429 });
    expect(error.message).toContain('rate limit');
  });

  it.each([
    [500, 'api_error', 'Internal server error'],
    [529, 'overloaded_error', 'Overloaded'],
  ] as const)('classifies HTTP %i (%s) as a retryable server error', async (status, type, text) => {
    server.reply(wire.json(wire.errorBody(type, text), status));
    const error = await failureOf(adapter(server).complete(ask()));
    expect(error).toMatchObject({ kind: 'server', retryable: true, status });
  });

  it('classifies 400 as a bad_request that is not retried', async () => {
    server.reply(wire.json(wire.errorBody('invalid_request_error', 'temperature: Extra inputs are not permitted'), 400));
    const error = await failureOf(adapter(server).complete(ask()));
    expect(error).toMatchObject({ kind: 'bad_request', retryable: false, status: 400 });
  });

  it.each(['complete', 'stream'] as const)('classifies a connection reset (%s) as network', async (mode) => {
    server.reply({ kind: 'reset' });
    const provider = adapter(server);
    const error = mode === 'complete' ? await failureOf(provider.complete(ask())) : ((await drain(provider.stream!(ask()))).error as ProviderError);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'network', retryable: true });
  });

  it('rotates to the second key after a 401, and never shows a key', async () => {
    server.reply(
      wire.json(wire.errorBody('authentication_error', `invalid x-api-key: ${KEY}`), 401),
      wire.json(wire.textMessage),
    );
    const provider = adapter(server, { apiKeys: [KEY, SECOND_KEY] });
    const error = await failureOf(provider.complete(ask()));
    expect(error).toMatchObject({ kind: 'auth', retryable: true, status: 401 });
    expectNoKey(error);
    const response = await provider.complete(ask());
    expect(response.text).toBe('Ana plays for the red team.');
    expect(server.requests.map((request) => request.headers['authorization'])).toEqual([`Bearer ${KEY}`, `Bearer ${SECOND_KEY}`]);
  });

  it('gives up once every key is refused', async () => {
    server.reply(wire.json(wire.errorBody('authentication_error', 'invalid x-api-key'), 401));
    const provider = adapter(server);
    const error = await failureOf(provider.complete(ask()));
    expect(error).toMatchObject({ kind: 'auth', retryable: false });
    // No request is sent with a refused key.
    expect(await failureOf(provider.complete(ask()))).toMatchObject({ kind: 'auth', retryable: false });
    expect(server.requests).toHaveLength(1);
  });
});

describe('anthropicProvider: stream failures', () => {
  it('turns a stream cut mid-<ACTION> into a network error after the text it showed', async () => {
    // Cut after the second text piece: the block is open, the message never stops.
    server.reply(wire.sse(wire.actionStream, { cutAfter: 4 }));
    const { events, error } = await drain(adapter(server).stream!(ask({ stop: ['</ACTION>'] })));
    expect(events.map((event) => event.type)).toEqual(['text', 'text']);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'network', retryable: true });
  });

  it('turns a stream that ends without message_stop into a network error', async () => {
    server.reply(wire.sse(wire.textStream.slice(0, -2)));
    const { events, error } = await drain(adapter(server).stream!(ask()));
    expect(events.some((event) => event.type === 'finish')).toBe(false);
    expect(error).toMatchObject({ kind: 'network', retryable: true });
  });

  it.each([
    ['overloaded_error', 'server', wire.overloadedMidStream],
    ['rate_limit_error', 'rate_limit', wire.rateLimitedMidStream],
  ] as const)('classifies an %s event after the 200 as %s', async (_, kind, events) => {
    server.reply(wire.sse(events));
    const { error } = await drain(adapter(server).stream!(ask()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind, retryable: true });
  });

  it('times out a response that never comes', async () => {
    server.reply({ kind: 'hang' });
    const error = await failureOf(adapter(server, { timeoutMs: 50 }).complete(ask()));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('times out a stream that goes silent part-way', async () => {
    // Silent after the second text piece (start, block start, ping, two deltas).
    server.reply(wire.sse(wire.textStream, { hangAfter: 5 }));
    // Long enough that a busy machine still delivers the first pieces before it fires.
    const { events, error } = await drain(adapter(server, { timeoutMs: 1_000 }).stream!(ask()));
    expect(events.map((event) => event.type)).toEqual(['text', 'text']);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('reports aborted when the caller aborts mid-stream', async () => {
    server.reply(wire.sse(wire.textStream, { hangAfter: 4 }));
    const controller = new AbortController();
    const seen: string[] = [];
    let failure: unknown;
    try {
      for await (const event of adapter(server).stream!(ask({ signal: controller.signal }))) {
        seen.push(event.type);
        controller.abort();
      }
    } catch (error) {
      failure = error;
    }
    expect(seen).toEqual(['text']);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it('reports aborted for a complete aborted while waiting', async () => {
    server.reply({ kind: 'hang' });
    const controller = new AbortController();
    const pending = adapter(server).complete(ask({ signal: controller.signal }));
    await server.received(1);
    controller.abort();
    expect(await failureOf(pending)).toMatchObject({ kind: 'aborted' });
  });
});
