import type { Redis } from 'ioredis';

/**
 * The Lua side of a shared budget. One hash per budget holds what was used (`modelCalls`,
 * `toolCalls`, `tokens`, `costNanos`: dollars × 10⁹, counted as integers so that sums are exact),
 * `estimated` and `costed` flags, `startedAt` (Redis's clock, set once by the first check),
 * `refusal` (`kind|used|adding`, sticky) and `announced`. The rules are `Budget.refuse` and
 * `Budget.charge`, line for line; the message is worked out by the caller from `refusal`, so it
 * reads the same as the in-process budget's.
 *
 * KEYS[1]: the hash; KEYS[2]: where this call's reply is kept for a minute, so a call resent after
 * a dropped connection is answered, not counted, a second time.
 * ARGV: mode (`refuse`, `spend`: refuse then charge, `charge`), the limits in `ORDER` ('' for
 * none), modelCalls, toolCalls, tokens, estimated ('1'/'0'), costNanos ('' for none).
 */
const SPEND = `
local done = redis.call('GET', KEYS[2])
if done then return done end
local mode = ARGV[1]
local mc, tc = tonumber(ARGV[7]), tonumber(ARGV[8])
local reply = ''
if mode ~= 'charge' then
  reply = redis.call('HGET', KEYS[1], 'refusal')
  if not reply then
    reply = ''
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    redis.call('HSETNX', KEYS[1], 'startedAt', now)
    local started = tonumber(redis.call('HGET', KEYS[1], 'startedAt'))
    local kinds = {'modelCalls', 'toolCalls', 'tokens', 'costUsd', 'wallMs'}
    for i, kind in ipairs(kinds) do
      local limit = ARGV[i + 1]
      local calls = kind == 'modelCalls' or kind == 'toolCalls'
      local adding = 0
      if kind == 'modelCalls' then adding = mc elseif kind == 'toolCalls' then adding = tc end
      local skip = limit == '' or (calls and adding == 0) or ((kind == 'tokens' or kind == 'costUsd') and not (mc > 0))
      if not skip then
        limit = tonumber(limit)
        local raw
        local used
        if kind == 'wallMs' then
          used = now - started
          raw = tostring(used)
        elseif kind == 'costUsd' then
          raw = redis.call('HGET', KEYS[1], 'costNanos') or '0'
          used = tonumber(raw) / 1e9
        else
          raw = redis.call('HGET', KEYS[1], kind) or '0'
          used = tonumber(raw)
        end
        local fits
        if adding > 0 then fits = used + adding <= limit else fits = used < limit end
        if not fits then
          reply = kind .. '|' .. raw .. '|' .. tostring(adding)
          redis.call('HSET', KEYS[1], 'refusal', reply)
          break
        end
      end
    end
  end
end
if reply == '' and mode ~= 'refuse' then
  if mc ~= 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'modelCalls', ARGV[7]) end
  if tc ~= 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'toolCalls', ARGV[8]) end
  if tonumber(ARGV[9]) > 0 then
    redis.call('HINCRBYFLOAT', KEYS[1], 'tokens', ARGV[9])
    if ARGV[10] == '1' then redis.call('HSET', KEYS[1], 'estimated', '1') end
  end
  if ARGV[11] ~= '' then
    redis.call('HINCRBY', KEYS[1], 'costNanos', ARGV[11])
    redis.call('HSET', KEYS[1], 'costed', '1')
  end
end
reply = 'r' .. reply
redis.call('SET', KEYS[2], reply, 'PX', 60000)
return reply
`;

/** KEYS[1]: the hash. The whole hash, and Redis's clock in ms (for the wall time used). */
const READ = `
local t = redis.call('TIME')
return {tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), redis.call('HGETALL', KEYS[1])}
`;

/** KEYS[1]: the hash. 1 exactly once after the budget is exhausted, across every process. */
const ANNOUNCE = `
if not redis.call('HGET', KEYS[1], 'refusal') then return 0 end
return redis.call('HSETNX', KEYS[1], 'announced', '1')
`;

/** A client with the budget's scripts defined (EVALSHA, with EVAL when Redis has not seen them). */
export type BudgetClient = Redis & {
  troupeBudgetSpend(hash: string, done: string, ...args: string[]): Promise<string>;
  troupeBudgetRead(hash: string): Promise<[number, string[]]>;
  troupeBudgetAnnounce(hash: string): Promise<0 | 1>;
};

export function defineBudgetScripts(client: Redis): BudgetClient {
  client.defineCommand('troupeBudgetSpend', { numberOfKeys: 2, lua: SPEND });
  client.defineCommand('troupeBudgetRead', { numberOfKeys: 1, lua: READ });
  client.defineCommand('troupeBudgetAnnounce', { numberOfKeys: 1, lua: ANNOUNCE });
  return client as BudgetClient;
}
