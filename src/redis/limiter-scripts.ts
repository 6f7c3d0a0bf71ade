import type { Redis } from 'ioredis';

/**
 * The Lua side of the Redis limiter. Every script takes the same five keys of one limiter key
 * (see `limiterKeys`) and reads the clock with `TIME`, so every process and machine agrees on
 * when a lease expires whatever its own clock says.
 *
 * - `holders`: sorted set, lease id → expiry (ms). Its size is the number of slots taken.
 * - `queue`: sorted set, waiter id → ticket (from `seq`): the order waiters are served in.
 * - `waiting`: sorted set, waiter id → expiry (ms): a waiter that stops polling drops out.
 * - `seq`: the ticket counter. `limit`: the last limit asked for, so a release knows how many
 *   waiters it may wake.
 *
 * A waiter's id is `<instance>:<n>`; waking it pushes the limiter key onto `<wakePrefix><instance>`,
 * the list that instance's blocking connection waits on (BLPOP). The list outlives a dropped
 * connection, so a wake-up sent meanwhile is still there once it is back.
 */
const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function sweep(now)
  local freed = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
  for _, w in ipairs(dead) do redis.call('ZREM', KEYS[2], w) end
  if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) end
  return freed + #dead
end
local function wake(limit, except, keep)
  local free = limit - redis.call('ZCARD', KEYS[1])
  if free <= 0 then return end
  for _, w in ipairs(redis.call('ZRANGE', KEYS[2], 0, free - 1)) do
    if w ~= except then
      local list = ARGV[1] .. string.match(w, '^(.*):[^:]*$')
      redis.call('LPUSH', list, ARGV[2])
      redis.call('LTRIM', list, 0, 255)
      redis.call('PEXPIRE', list, keep)
    end
  end
end
local function keep_keys(keep)
  for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], keep) end
end
`;

/**
 * ARGV: wakePrefix, key, id, limit, leaseMs, waitMs, keepMs. Grants when fewer than `limit` are
 * held and fewer waiters are ahead of this one than slots are free (a newcomer queues behind
 * everyone waiting): `{1, expiry}`. Else queues the waiter (or keeps its place) for `waitMs`:
 * `{0, held, ahead}`. Granting an id that already holds only renews it: a retry after a reply
 * lost to a dropped connection takes no second slot.
 */
const ACQUIRE = `${PRELUDE}
local id, limit, lease, waitms, keep = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local now = now_ms()
sweep(now)
redis.call('SET', KEYS[5], limit, 'PX', keep)
if redis.call('ZSCORE', KEYS[1], id) then
  redis.call('ZADD', KEYS[1], now + lease, id)
  return {1, now + lease}
end
local held = redis.call('ZCARD', KEYS[1])
local rank = redis.call('ZRANK', KEYS[2], id)
local ahead = rank or redis.call('ZCARD', KEYS[2])
if ahead < limit - held then
  redis.call('ZADD', KEYS[1], now + lease, id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  keep_keys(keep)
  wake(limit, id, keep)
  return {1, now + lease}
end
if not rank then redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), id) end
redis.call('ZADD', KEYS[3], now + waitms, id)
keep_keys(keep)
wake(limit, id, keep)
return {0, held, ahead}
`;

/** ARGV: wakePrefix, key, id, keepMs. Gives a lease back or takes a waiter out of the queue, and wakes whoever may now go. */
const RELEASE = `${PRELUDE}
local id, keep = ARGV[3], tonumber(ARGV[4])
sweep(now_ms())
local removed = redis.call('ZREM', KEYS[1], id) + redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
wake(tonumber(redis.call('GET', KEYS[5]) or '0'), id, keep)
return removed
`;

/**
 * ARGV: wakePrefix, key, id, limit, leaseMs, keepMs. Extends a held lease: 1. A lease Redis no
 * longer has (it expired while this process stalled, or Redis restarted empty) is taken again
 * when a slot is free: 2; else 0, and the holder is told its lease is lost.
 */
const RENEW = `${PRELUDE}
local id, limit, lease, keep = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local now = now_ms()
sweep(now)
if redis.call('ZSCORE', KEYS[1], id) then
  redis.call('ZADD', KEYS[1], now + lease, id)
  keep_keys(keep)
  return 1
end
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now + lease, id)
  redis.call('SET', KEYS[5], limit, 'PX', keep)
  keep_keys(keep)
  return 2
end
return 0
`;

/** ARGV: none. Slots held now, expired leases not counted. */
const HELD = `
local t = redis.call('TIME')
return redis.call('ZCOUNT', KEYS[1], '(' .. (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)), '+inf')
`;

type Arg = string | number;

/** A client with the limiter's scripts defined (EVALSHA, with EVAL when Redis has not seen them). */
export type LimiterClient = Redis & {
  troupeLimiterAcquire(...args: Arg[]): Promise<[1, number] | [0, number, number]>;
  troupeLimiterRelease(...args: Arg[]): Promise<number>;
  troupeLimiterRenew(...args: Arg[]): Promise<0 | 1 | 2>;
  troupeLimiterHeld(key: string): Promise<number>;
};

/** Pipelined calls of the same scripts. */
export type LimiterPipeline = ReturnType<Redis['pipeline']> & {
  troupeLimiterAcquire(...args: Arg[]): LimiterPipeline;
  troupeLimiterRelease(...args: Arg[]): LimiterPipeline;
  troupeLimiterRenew(...args: Arg[]): LimiterPipeline;
};

export function defineLimiterScripts(client: Redis): LimiterClient {
  client.defineCommand('troupeLimiterAcquire', { numberOfKeys: 5, lua: ACQUIRE });
  client.defineCommand('troupeLimiterRelease', { numberOfKeys: 5, lua: RELEASE });
  client.defineCommand('troupeLimiterRenew', { numberOfKeys: 5, lua: RENEW });
  client.defineCommand('troupeLimiterHeld', { numberOfKeys: 1, lua: HELD });
  return client as LimiterClient;
}

/** The five keys of one limiter key, in the order the scripts take them. */
export function limiterKeys(prefix: string, key: string): [string, string, string, string, string] {
  const base = `${prefix}:${key}`;
  return [`${base}:holders`, `${base}:queue`, `${base}:waiting`, `${base}:seq`, `${base}:limit`];
}
