/*
 * The groups of writes that logAckWith and applyWritesOnce take after their own arguments, one
 * group per key (k = index into KEYS, from 2), in the order the caller aggregated them:
 *   'z', k, ttlMs or '', count, score1, member1, ...   ZADD (then PEXPIRE NX when a TTL is given)
 *   'i', k, ttlMs or '', by                           INCRBY (then PEXPIRE NX)
 *   'r', k, count, member1, ...                       ZREM
 * The check walks every group before the first write (a script error does not undo earlier ones);
 * the writes then leave `failed` counting the commands Redis refused.
 */

/** Lua returning an error reply from the script when the groups starting at ARGV[first] are malformed. */
export function checkWriteGroups(script: string, first: string): string {
  return `
-- A script error does not undo earlier writes: walk the groups (not their members) before writing.
local a = ${first}
while a <= #ARGV do
  local op, k = ARGV[a], tonumber(ARGV[a + 1])
  if not k or k < 2 or k > #KEYS then return redis.error_reply('${script}: bad key index at ARGV[' .. (a + 1) .. ']') end
  local count = tonumber(ARGV[op == 'r' and a + 2 or a + 3])
  if op ~= 'i' and (not count or count < 1 or count % 1 ~= 0) then return redis.error_reply('${script}: bad count at ARGV[' .. a .. ']') end
  if op == 'z' then a = a + 4 + 2 * count
  elseif op == 'i' then a = a + 4
  elseif op == 'r' then a = a + 3 + count
  else return redis.error_reply('${script}: bad op at ARGV[' .. a .. ']') end
end
if a ~= #ARGV + 1 then return redis.error_reply('${script}: truncated writes') end
`;
}

/** Lua applying the groups starting at ARGV[first]; defines \`failed\`. */
export function applyWriteGroups(first: string): string {
  return `
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
a = ${first}
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
`;
}
