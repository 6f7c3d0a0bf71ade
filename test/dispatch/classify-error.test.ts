import { describe, expect, it } from 'vitest';
import { classifyError } from '../../src/tools/classify-error.js';
import { ToolError } from '../../src/tools/tool-error.js';

const coded = (code: string, message = `${code}: failed`) => Object.assign(new Error(message), { code });
const http = (status: number) => Object.assign(new Error(`HTTP ${status}`), { status });

// Classification of tool errors (file system, network, HTTP status, …) into kinds, with retryable
// defaults and hints for the model.
describe('classifyError', () => {
  it.each([
    ['ENOENT', coded('ENOENT', "ENOENT: no such file or directory, open './missing.json'"), 'not_found', false],
    ['EACCES', coded('EACCES', "EACCES: permission denied, open '/etc/shadow'"), 'permission', false],
    ['EPERM', coded('EPERM'), 'permission', false],
    ['ECONNRESET', coded('ECONNRESET'), 'network', true],
    ['ECONNREFUSED', coded('ECONNREFUSED'), 'network', true],
    ['ETIMEDOUT', coded('ETIMEDOUT'), 'timeout', true],
    ['EPIPE', coded('EPIPE'), 'network', true],
    ['EAI_AGAIN', coded('EAI_AGAIN'), 'network', true],
    ['ENOTFOUND', coded('ENOTFOUND'), 'network', true],
    ['UND_ERR_SOCKET', coded('UND_ERR_SOCKET'), 'network', true],
    ['fetch failed with a coded cause', new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }), 'network', true],
    ['HTTP 429', http(429), 'rate_limit', true],
    ['HTTP 502', http(502), 'network', true],
    ['HTTP 503', http(503), 'network', true],
    ['HTTP 504', http(504), 'network', true],
    ['HTTP 401', http(401), 'permission', false],
    ['HTTP 403', http(403), 'permission', false],
    ['HTTP 404', http(404), 'not_found', false],
    ['statusCode 503', Object.assign(new Error('unavailable'), { statusCode: 503 }), 'network', true],
    ['response.status 429', Object.assign(new Error('rate limited'), { response: { status: 429 } }), 'rate_limit', true],
    ['HTTP 400', http(400), 'execution', false],
    ['TimeoutError', new DOMException('slow', 'TimeoutError'), 'timeout', true],
    ['AbortError', new DOMException('stop', 'AbortError'), 'aborted', false],
    ['plain Error', new Error('nope'), 'execution', false],
    ['a non-Error with a code', { code: 'ENOENT' }, 'not_found', false],
    // Errors with no code or status: their words say the kind.
    ['a command that timed out', new Error('Command timed out after 120000ms'), 'timeout', true],
    ['a thrown string that timed out', 'Command timed out after 120000ms', 'timeout', true],
    ['a timeout in other words', new Error('Request timeout: no answer from the server'), 'timeout', true],
    ['ETIMEDOUT in the message only', new Error('connect ETIMEDOUT 10.0.0.1:443'), 'timeout', true],
    ['a cause that timed out', new Error('query failed', { cause: new Error('operation timed out') }), 'timeout', true],
    ['ECONNRESET in the message only', new Error('read ECONNRESET'), 'network', true],
    ['ECONNREFUSED in the message only', new Error('connect ECONNREFUSED 127.0.0.1:5432'), 'network', true],
    ['EAI_AGAIN in the message only', new Error('getaddrinfo EAI_AGAIN api.example.com'), 'network', true],
    ['socket hang up', new Error('socket hang up'), 'network', true],
    ['HTTP 429 in the message only', new Error('Request failed with status code 429'), 'rate_limit', true],
    ['too many requests', new Error('429 Too Many Requests'), 'rate_limit', true],
    ['rate limited', 'rate limit exceeded, retry later', 'rate_limit', true],
    ['a number that is not a status', new Error('found 429 rows where 430 were expected'), 'execution', false],
    ['words of no kind', new Error('the output was empty'), 'execution', false],
  ])('%s', (_label, error, kind, retryable) => {
    expect(classifyError(error)).toMatchObject({ kind, retryable });
  });

  it('gives the hints the model can act on', () => {
    expect(classifyError(coded('ENOENT')).hint).toMatch(/check the path/);
    expect(classifyError(coded('EACCES')).hint).toMatch(/not accessible/);
    expect(classifyError(new Error('x')).hint).toBeUndefined();
  });

  it('takes a ToolError as thrown', () => {
    expect(classifyError(new ToolError('rate limited', { kind: 'network', retryable: false }))).toEqual({
      kind: 'network',
      message: 'rate limited',
      retryable: false,
    });
    expect(classifyError(new ToolError('flaky', { kind: 'network' })).retryable).toBe(true);
  });

  it('names non-Error values readably', () => {
    expect(classifyError('oops').message).toBe('tool threw a non-Error value: "oops"');
    expect(classifyError(undefined).message).toBe('tool threw a non-Error value: undefined');
    expect(classifyError(null).message).toBe('tool threw a non-Error value: null');
    expect(classifyError({}).message).toBe('tool threw a non-Error value: {}');
    expect(classifyError(12n).message).toBe('tool threw a non-Error value: 12n');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(classifyError(cyclic).message).toBe('tool threw a non-Error value: [object Object]');
  });

  it('survives hostile errors: throwing getters, cyclic causes, huge messages', () => {
    const hostile = new Proxy(new Error('x'), {
      get: () => {
        throw new Error('trap');
      },
    });
    expect(classifyError(hostile)).toMatchObject({ kind: 'unknown', retryable: false });
    const loop = new Error('a') as Error & { cause?: unknown };
    loop.cause = loop;
    expect(classifyError(loop).kind).toBe('execution');
    const long = classifyError(new Error('x'.repeat(100_000))).message;
    expect(long.length).toBeLessThan(2_100);
    expect(long).toMatch(/more characters]$/);
  });
});
