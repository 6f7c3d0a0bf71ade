import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { CATALOGUE_VERSION, createBus } from '../../src/bus/index.js';
import { bridgeToRedis, openRedisBridge, RedisError, streamKeyOf, subscribeRedis } from '../../src/redis/index.js';
import { compareVersions } from '../../src/redis/connect.js';
import { failWithoutRedisUnderCi, fakeRedis, findRedis } from './redis-server.js';

const redis = await findRedis();
failWithoutRedisUnderCi(redis);
afterAll(() => redis?.stop());

/** What a promise rejected with, as `code: message` (one line). */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(RedisError);
    const { code, message } = error as RedisError;
    expect(message).not.toContain('\n');
    return { code, message };
  }
  throw new Error('expected a rejection');
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('startup errors, without a Redis', () => {
  it('a refused connection fails at once, without retrying', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`;
    const started = Date.now();
    const { code, message } = await refusal(openRedisBridge({ url, scene: 'any' }));
    expect(code).toBe('redis_unreachable');
    expect(message).toBe(`cannot reach Redis at ${url}: connection refused (is redis-server running there?)`);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await refusal(subscribeRedis({ url, scene: 'any' }))).code).toBe('redis_unreachable');
  });

  it('a server that never answers fails after the connect timeout', async () => {
    const silent = await fakeRedis({ silent: true });
    const started = Date.now();
    const { code, message } = await refusal(subscribeRedis({ url: silent.url, scene: 'any', connectTimeoutMs: 300 }));
    expect(code).toBe('redis_unreachable');
    expect(message).toBe(`cannot reach Redis at ${silent.url}: no answer within 300 ms`);
    expect(Date.now() - started).toBeLessThan(1_500);
    await silent.close();
  });

  it('an unknown host, and a URL that is not one, say so', async () => {
    expect(await refusal(openRedisBridge({ url: 'redis://no-such-host.invalid:6379', scene: 'any' }))).toEqual({
      code: 'redis_unreachable',
      message: 'cannot reach Redis at redis://no-such-host.invalid:6379: no such host',
    });
    await expect(openRedisBridge({ url: 'http://127.0.0.1:6379', scene: 'any' })).rejects.toThrow(/Redis url must look like redis:\/\/host:6379/);
  });

  it('a Redis older than 6.2 is refused with its version', async () => {
    const old = await fakeRedis({ version: '6.0.9' });
    expect(await refusal(openRedisBridge({ url: old.url, scene: 'any' }))).toEqual({
      code: 'redis_too_old',
      message: `Redis at ${old.url} is version 6.0.9; troupe needs 6.2.0 or later (XADD MINID, XAUTOCLAIM)`,
    });
    await old.close();
    expect(compareVersions('6.2.0', '6.2')).toBe(0);
    expect(compareVersions('7.0.15', '6.2.0')).toBeGreaterThan(0);
    expect(compareVersions('6.0.20', '6.2.0')).toBeLessThan(0);
  });
});

describe.runIf(redis !== undefined)('startup errors, with a Redis', () => {
  const url = redis?.url ?? '';

  it('refused credentials: an ACL user with another password', async () => {
    const user = `troupe-test-${randomBytes(4).toString('hex')}`;
    await redis!.admin.acl('SETUSER', user, 'on', '>right-password', '~*', '+@all');
    try {
      const parsed = new URL(url);
      parsed.username = user;
      parsed.password = 'wrong-password';
      const { code, message } = await refusal(openRedisBridge({ url: parsed.toString(), scene: 'any' }));
      expect(code).toBe('redis_auth_failed');
      expect(message).toMatch(/^Redis at redis:\/\/troupe-test-\w+:\*\*\*@.* refused the credentials: WRONGPASS .*\(check the user and password in the URL\)$/);
      expect(message).not.toContain('wrong-password');
      parsed.password = 'right-password';
      const bridge = await openRedisBridge({ url: parsed.toString(), scene: redis!.scene('acl') });
      await bridge.close();
    } finally {
      await redis!.admin.acl('DELUSER', user);
    }
  });

  it('a stream of another scene, for a writer and for a subscriber', async () => {
    const scene = redis!.scene('mine');
    const stream = streamKeyOf(scene);
    const bridge = await bridgeToRedis(createBus(), { url, scene });
    await bridge.close();
    const other = redis!.scene('other');
    expect(await refusal(openRedisBridge({ url, scene: other, stream }))).toEqual({
      code: 'redis_stream_mismatch',
      message: `Redis stream ${stream} cannot be used: it belongs to scene "${scene}", not "${other}": give each scene its own stream`,
    });
    expect((await refusal(subscribeRedis({ url, scene: other, stream }))).message).toContain(`it belongs to scene "${scene}"`);
  });

  it('a stream of another catalogue version', async () => {
    const scene = redis!.scene('catalogue');
    const stream = streamKeyOf(scene);
    await redis!.admin.set(`${stream}:header`, JSON.stringify({ format: 'troupe-stream', version: 1, catalogue: CATALOGUE_VERSION + 1, scene, createdAt: new Date().toISOString() }));
    const expected = `Redis stream ${stream} cannot be used: it holds events of catalogue version ${CATALOGUE_VERSION + 1}, and this troupe speaks version ${CATALOGUE_VERSION}: use another stream, or delete ${stream} and ${stream}:header`;
    expect(await refusal(openRedisBridge({ url, scene }))).toEqual({ code: 'redis_stream_mismatch', message: expected });
    expect(await refusal(subscribeRedis({ url, scene }))).toEqual({ code: 'redis_stream_mismatch', message: expected });
  });

  it('a key that is not a troupe stream, and a second writer', async () => {
    const scene = redis!.scene('taken');
    await redis!.admin.set(streamKeyOf(scene), 'a string');
    expect((await refusal(openRedisBridge({ url, scene }))).message).toBe(`Redis stream ${streamKeyOf(scene)} cannot be used: the key is a string, not a stream`);
    const shared = redis!.scene('shared');
    const first = await openRedisBridge({ url, scene: shared });
    const second = await refusal(openRedisBridge({ url, scene: shared }));
    expect(second.code).toBe('redis_stream_mismatch');
    expect(second.message).toMatch(/it is being written by .*:\d+:\w+; one writer per stream/);
    await first.close();
    // Once the first lets go, a new run of the scene appends after it.
    const next = await openRedisBridge({ url, scene: shared });
    await next.close();
  });

  it('a subscriber that starts before the scene waits for it, then checks its header', async () => {
    const scene = redis!.scene('early');
    const events = await subscribeRedis({ url, scene });
    const got: number[] = [];
    events.on('scene.tick', (event) => void got.push(event.data.tick));
    const bus = createBus();
    const bridge = await bridgeToRedis(bus, { url, scene });
    bus.publish('scene.tick', { tick: 1 });
    await bridge.close();
    await expect.poll(() => got).toEqual([1]);
    expect(events.header?.scene).toBe(scene);
    await events.close();
  });
});
