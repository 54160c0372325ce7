import type { LuaScript } from './lua-script.js';

/**
 * Applies a consumer's batch of writes and acknowledges (and deletes) the messages it came from,
 * in one step, only while every message is still pending for that consumer: a batch handed out
 * twice is applied once. Writes arrive grouped by key, as the caller aggregated them.
 */
export const logAckWithScript: LuaScript = {
  name: 'logAckWith',
  numberOfKeys: 1,
  variadicKeys: true,
  lua: `
-- logAckWith
-- KEYS[1]   the log (a stream); KEYS[2..] the keys written
-- ARGV[1]   group, ARGV[2] consumer, ARGV[3] n = number of message ids, ARGV[4 .. 3+n] the ids,
--           the lowest first and the highest last
-- then, repeated until the end of ARGV, one group of writes per key (k = index into KEYS):
--   'z', k, ttlMs or '', count, score1, member1, ...   ZADD (then PEXPIRE NX when a TTL is given)
--   'i', k, ttlMs or '', by                           INCRBY (then PEXPIRE NX)
--   'r', k, count, member1, ...                       ZREM
-- Returns {1, writes that failed} when applied, {0, 0} when some message is no longer pending
-- for the consumer (nothing written).
local log, group, consumer, n = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
-- Every id pending for this consumer: one range read over the batch's ids (the consumer's other
-- messages in that range count against the cap), each id checked exactly when it overflows.
local cap = 2 * n + 100
local mine = {}
local held = redis.call('XPENDING', log, group, ARGV[4], ARGV[3 + n], cap, consumer)
for _, p in ipairs(held) do mine[p[1]] = true end
for i = 4, 3 + n do
  if not mine[ARGV[i]] then
    if #held < cap then return {0, 0} end
    local p = redis.call('XPENDING', log, group, ARGV[i], ARGV[i], 1)[1]
    if not p or p[2] ~= consumer then return {0, 0} end
  end
end
-- A script error does not undo earlier writes: walk the groups (not their members) before writing.
local a = 4 + n
while a <= #ARGV do
  local op, k = ARGV[a], tonumber(ARGV[a + 1])
  if not k or k < 2 or k > #KEYS then return redis.error_reply('logAckWith: bad key index at ARGV[' .. (a + 1) .. ']') end
  local count = tonumber(ARGV[op == 'r' and a + 2 or a + 3])
  if op ~= 'i' and (not count or count < 1 or count % 1 ~= 0) then return redis.error_reply('logAckWith: bad count at ARGV[' .. a .. ']') end
  if op == 'z' then a = a + 4 + 2 * count
  elseif op == 'i' then a = a + 4
  elseif op == 'r' then a = a + 3 + count
  else return redis.error_reply('logAckWith: bad op at ARGV[' .. a .. ']') end
end
if a ~= #ARGV + 1 then return redis.error_reply('logAckWith: truncated writes') end
local failed = 0
-- pcall: one bad key (wrong type) must not drop the other writes of the batch
local function call(...)
  local ok = redis.pcall(...)
  if type(ok) == 'table' and ok.err then failed = failed + 1 end
end
-- unpack has a stack limit: at most 1000 arguments per command
local function chunked(cmd, key, from, to, step)
  for s = from, to, step do call(cmd, key, unpack(ARGV, s, math.min(s + step - 1, to))) end
end
a = 4 + n
while a <= #ARGV do
  local op, key = ARGV[a], KEYS[tonumber(ARGV[a + 1])]
  if op == 'z' then
    local ttl, count = ARGV[a + 2], tonumber(ARGV[a + 3])
    chunked('ZADD', key, a + 4, a + 3 + 2 * count, 1000)
    if ttl ~= '' then call('PEXPIRE', key, ttl, 'NX') end
    a = a + 4 + 2 * count
  elseif op == 'i' then
    call('INCRBY', key, ARGV[a + 3])
    if ARGV[a + 2] ~= '' then call('PEXPIRE', key, ARGV[a + 2], 'NX') end
    a = a + 4
  else
    local count = tonumber(ARGV[a + 2])
    chunked('ZREM', key, a + 3, a + 2 + count, 1000)
    a = a + 3 + count
  end
end
for s = 4, 3 + n, 1000 do
  local last = math.min(s + 999, 3 + n)
  redis.call('XACK', log, group, unpack(ARGV, s, last))
  redis.call('XDEL', log, unpack(ARGV, s, last))
end
return {1, failed}
`,
};
