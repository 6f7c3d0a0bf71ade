import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A partition's tick, committed at once or not at all: its events appended to the scene's stream,
 * its members' snapshots stored, its journal dropped, its turn acknowledged and its report added
 * to the done stream. `HSETNX` on `<tick>:<p>` makes a second commit of the same tick (a worker
 * thought dead that finishes after all) a no-op that only acknowledges.
 *
 * Returns the ids of the first and last event it appended (the committer skips them when it
 * reads the stream back: they happened in its process), 1 when there were none, 0 when the tick
 * had been committed already.
 *
 * KEYS: committed, events, done, turns:p, members:p, journal:p.
 * ARGV: field, worker, entry id, group, report, event count, events…, then member name/snapshot pairs.
 */
export const COMMIT_PART = `if redis.call('hsetnx', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  redis.call('xack', KEYS[4], ARGV[4], ARGV[3])
  return 0
end
local n = tonumber(ARGV[6])
local first, last
for i = 7, 6 + n do
  last = redis.call('xadd', KEYS[2], '*', 'event', ARGV[i], 'worker', ARGV[2])
  first = first or last
end
for i = 7 + n, #ARGV, 2 do redis.call('hset', KEYS[5], ARGV[i], ARGV[i + 1]) end
redis.call('del', KEYS[6])
redis.call('xack', KEYS[4], ARGV[4], ARGV[3])
redis.call('xadd', KEYS[3], 'MAXLEN', '~', '100000', '*', 'report', ARGV[5])
if first then return { first, last } end
return 1`;

/**
 * One world write: the next version, and the change in the world log under the id `<version>-0`,
 * so the log's order is the commit order and a replica catches up to a version by id. With a
 * lock field, the write is fenced: refused unless the lease is still the writer's.
 *
 * KEYS: version, log, locks. ARGV: keys JSON, op, value JSON, agent, cause, writer, lock field, lock token.
 */
export const COMMIT_WORLD = `if ARGV[7] ~= '' then
  local held = redis.call('hget', KEYS[3], ARGV[7])
  if not held or string.sub(held, string.find(held, '|', 1, true) + 1) ~= ARGV[8] then
    return redis.error_reply('LEASE_LOST the update held its path longer than its lease')
  end
end
local v = redis.call('incr', KEYS[1])
redis.call('xadd', KEYS[2], v .. '-0', 'keys', ARGV[1], 'op', ARGV[2], 'value', ARGV[3], 'agent', ARGV[4], 'cause', ARGV[5], 'by', ARGV[6])
return v`;

/**
 * Ticks whose commits are remembered (`<tick>:<p>` in the committed hash): a worker that finishes
 * a tick this far behind the run (cut off, then back) would commit it a second time.
 */
export const COMMITS_KEPT = 100;

/**
 * A tick of the coordinator, committed once: its own events (`scene.tick` first among them), the
 * tick's assignment of partitions to workers, then one turn entry per partition naming its
 * worker. Sent again after a dropped connection, it does nothing.
 *
 * KEYS: committed, events, assignment, turns:0 … turns:P-1.
 * ARGV: field, run, tick, assignment JSON ({ tick, owners }), event count, events….
 */
export const COMMIT_TICK = `if redis.call('hsetnx', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
local n = tonumber(ARGV[5])
for i = 6, 5 + n do redis.call('xadd', KEYS[2], '*', 'event', ARGV[i]) end
if #KEYS > 3 then
  redis.call('set', KEYS[3], ARGV[4])
  local owners = cjson.decode(ARGV[4]).owners
  for k = 4, #KEYS do redis.call('xadd', KEYS[k], 'MAXLEN', '~', '1000', '*', 'tick', ARGV[3], 'run', ARGV[2], 'owner', owners[k - 3]) end
  -- What the commits of long-past ticks recorded is needed no more: a run keeps a bounded window.
  local old = tonumber(ARGV[3]) - ${COMMITS_KEPT}
  if old > 0 then
    redis.call('hdel', KEYS[1], 'c:' .. old)
    for p = 0, #KEYS - 4 do redis.call('hdel', KEYS[1], old .. ':' .. p) end
  end
end
return 1`;

/**
 * Takes an exclusive lease on a world path for `update`, unless a live lease overlaps it (one
 * path is a prefix of the other: fields are keys each ended by \\x1f). Expired leases (a
 * process that died holding one) are dropped on the way. Returns the world's version, which
 * the update must see before it reads, or -1 when the path is taken.
 *
 * KEYS: locks, version. ARGV: field, token, lease ms.
 */
export const ACQUIRE_LEASE = `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('hgetall', KEYS[1])
local want = ARGV[1]
for i = 1, #all, 2 do
  local field, held = all[i], all[i + 1]
  local bar = string.find(held, '|', 1, true)
  local expires = tonumber(string.sub(held, 1, bar - 1))
  if expires <= now then
    redis.call('hdel', KEYS[1], field)
  elseif string.sub(held, bar + 1) == ARGV[2] then
    -- Ours already: this request was sent again after a dropped connection.
  elseif string.sub(field, 1, #want) == want or string.sub(want, 1, #field) == field then
    return -1
  end
end
redis.call('hset', KEYS[1], want, (now + tonumber(ARGV[3])) .. '|' .. ARGV[2])
return tonumber(redis.call('get', KEYS[2]) or '0')`;

/** Extends our lease (1), or says it is gone (0). KEYS: locks. ARGV: field, token, lease ms. */
export const RENEW_LEASE = `local held = redis.call('hget', KEYS[1], ARGV[1])
if not held or string.sub(held, string.find(held, '|', 1, true) + 1) ~= ARGV[2] then return 0 end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('hset', KEYS[1], ARGV[1], (now + tonumber(ARGV[3])) .. '|' .. ARGV[2])
return 1`;

/** Lets go of our lease. KEYS: locks. ARGV: field, token. */
export const RELEASE_LEASE = `local held = redis.call('hget', KEYS[1], ARGV[1])
if held and string.sub(held, string.find(held, '|', 1, true) + 1) == ARGV[2] then redis.call('hdel', KEYS[1], ARGV[1]) end
return 1`;

const shas = new Map<string, string>();

/** Runs a script by its SHA (loading it the first time Redis does not know it): one round trip. */
export async function runScript(client: Redis, script: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  let sha = shas.get(script);
  if (sha === undefined) shas.set(script, (sha = createHash('sha1').update(script).digest('hex')));
  try {
    return await client.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!/NOSCRIPT/.test(String(error))) throw error;
    return client.eval(script, keys.length, ...keys, ...args);
  }
}
