import type { LuaScript } from './lua-script.js';

/** One script, so the swap and its writes are all or nothing (every key shares KEYS[1]'s slot). */
export const compareAndSwapWithScript: LuaScript = {
  name: 'compareAndSwapWith',
  numberOfKeys: 1,
  variadicKeys: true,
  lua: `
-- compareAndSwapWith: compareAndSwap plus further writes, applied only when the swap succeeds.
-- KEYS[1]    versioned value: hash {v = version, d = data}
-- KEYS[1+i]  the key of write i
-- ARGV[1]    expected version (0 = the key must be absent)
-- ARGV[2]    data (stored without expiry, as compareAndSwap without a TTL)
-- ARGV[4i-1 .. 4i+2]  write i: op ('set'|'incr'|'zadd'), value|by|score, member or '', ttlMs or ''
-- Returns    {1, newVersion} on success; {0, currentVersion} when the versions differ (nothing written)
local cur = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if cur ~= tonumber(ARGV[1]) then return {0, cur} end
-- A script error does not undo earlier writes, so check every write before the first one.
for i = 2, #KEYS do
  local op = ARGV[4 * i - 5]
  local t = redis.call('TYPE', KEYS[i])['ok']
  if op == 'incr' and t ~= 'none' then
    -- fails exactly where the real INCRBY would (wrong type, not an integer) and changes nothing
    redis.call('INCRBY', KEYS[i], 0)
  elseif op == 'zadd' and t ~= 'none' and t ~= 'zset' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
  end
end
local nextVersion = cur + 1
redis.call('HSET', KEYS[1], 'd', ARGV[2], 'v', nextVersion)
redis.call('PERSIST', KEYS[1])
for i = 2, #KEYS do
  local a = 4 * i - 5
  local op, x, member, ttl = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  if op == 'set' then
    -- replaces (or clears) the TTL, as set() does
    if ttl ~= '' then redis.call('SET', KEYS[i], x, 'PX', ttl) else redis.call('SET', KEYS[i], x) end
  else
    if op == 'incr' then redis.call('INCRBY', KEYS[i], x) else redis.call('ZADD', KEYS[i], x, member) end
    -- NX: only a key without an expiry gets one, so later writes never move it (Redis >= 7.0)
    if ttl ~= '' then redis.call('PEXPIRE', KEYS[i], ttl, 'NX') end
  end
end
return {1, nextVersion}
`,
};
