import { describe, expect, it } from 'vitest';
import { classifyFailure, factsOf, retryAfter } from '../../src/llm/classify-failure.js';
import { KeyRing } from '../../src/llm/index.js';

describe('KeyRing', () => {
  it('uses keys in turn, rests a rate-limited one and sets a refused one aside', () => {
    let now = 0;
    const ring = new KeyRing(['sk-aaaa1111', ' sk-bbbb2222 ', '', 'sk-cccc3333'], () => now);
    expect(ring.size).toBe(3);
    expect([ring.lease()!.label, ring.lease()!.label, ring.lease()!.label, ring.lease()!.label]).toEqual([
      'key 1 of 3',
      'key 2 of 3',
      'key 3 of 3',
      'key 1 of 3',
    ]);
    const second = ring.lease()!;
    expect(second.value).toBe('sk-bbbb2222');
    ring.rest(second, 5_000);
    ring.revoke(ring.lease()!); // key 3
    expect(ring.lease()!.index).toBe(0);
    expect(ring.lease()!.index).toBe(0); // key 2 rests, key 3 is gone
    expect(ring.waitMs()).toBe(0);
    ring.rest(ring.lease()!, 2_000);
    // Every usable key rests: the one that wakes first is offered, and the wait says when.
    expect(ring.waitMs()).toBe(2_000);
    expect(ring.lease()!.index).toBe(0);
    now = 5_000;
    expect(ring.waitMs()).toBe(0);
    ring.revoke({ index: 0, label: '', value: '' });
    ring.revoke({ index: 1, label: '', value: '' });
    expect(ring.lease()).toBeUndefined();
    expect(ring.waitMs()).toBeUndefined();
  });

  it('refuses an empty key list, and redacts keys and masked echoes of them', () => {
    expect(() => new KeyRing(['', '  '])).toThrow('no API key given');
    const ring = new KeyRing(['sk-live-abcdef123456']);
    expect(ring.redact('bad key sk-live-abcdef123456; also Incorrect API key provided: sk-live-***************3456.')).toBe(
      'bad key [key 1]; also Incorrect API key provided: [redacted]',
    );
  });
});

describe('classifyFailure', () => {
  const context = { provider: 'openai' };

  it('reads retry-after in seconds, in milliseconds and as an HTTP date', () => {
    expect(retryAfter(new Headers({ 'retry-after': '7' }))).toBe(7_000);
    expect(retryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '7' }))).toBe(250);
    expect(retryAfter({ 'Retry-After': 'Thu, 01 Jan 1970 00:00:10 GMT' }, 4_000)).toBe(6_000);
    expect(retryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfter(undefined)).toBeUndefined();
  });

  it('classifies statuses, sockets, timeouts and aborts', () => {
    const rate = classifyFailure({ status: 429, headers: new Headers({ 'retry-after': '2' }), message: 'Too Many Requests' }, context);
    expect(rate).toMatchObject({ kind: 'rate_limit', retryable: true, retryAfterMs: 2_000, status: 429, message: 'openai: HTTP 429: Too Many Requests' });
    expect(classifyFailure({ status: 503, message: 'x' }, context)).toMatchObject({ kind: 'server', retryable: true });
    expect(classifyFailure({ status: 401, message: 'x' }, context)).toMatchObject({ kind: 'auth', retryable: false });
    expect(classifyFailure({ status: 422, message: 'x' }, context)).toMatchObject({ kind: 'bad_request', retryable: false });
    const reset = Object.assign(new Error('fetch failed'), { cause: Object.assign(new Error('socket'), { code: 'ECONNRESET' }) });
    expect(classifyFailure(factsOf(reset), context)).toMatchObject({ kind: 'network', retryable: true });
    expect(classifyFailure({ message: 'aborted' }, { ...context, timedOut: true, timeoutMs: 50 })).toMatchObject({
      kind: 'timeout',
      message: 'openai: no answer within 50 ms',
    });
    const controller = new AbortController();
    controller.abort();
    expect(classifyFailure({ message: 'aborted' }, { ...context, signal: controller.signal })).toMatchObject({ kind: 'aborted', retryable: false });
    expect(classifyFailure({ status: 401, message: 'Incorrect API key provided: sk-abc*****wxyz' }, context).message).not.toContain('wxyz');
  });
});
