import type { LuaScript } from './lua-script.js';

/**
 * Pops queued deferred writes and applies them, grouped by key, in one script: an entry is
 * applied exactly once even when several processes drain the queue at the same time.
 */
export const applyDeferredScript: LuaScript = {
  name: 'applyDeferred',
  numberOfKeys: 1,
  lua: `
-- applyDeferred: applies up to ARGV[1] entries of the deferred-write queue.
-- KEYS[1]  the queue: a list of JSON arrays, 5 strings per write:
--          'z', key, score, member, ttlMs or ''   (ZADD)
--          'i', key, by, '', ttlMs or ''          (INCRBY)
--          'r', key, '', member, ''               (ZREM, after every ZADD of the popped entries)
-- ARGV[1]  most entries to pop
-- Returns  {entries popped, entries still queued, writes (or unreadable entries) that failed}
-- The keys written are named inside the entries, so this script needs a single Redis (not Cluster).
local entries = redis.call('LPOP', KEYS[1], ARGV[1])
if not entries then return {0, 0, 0} end
local zkeys, zargs, ikeys, iby, tkeys, ttl, rkeys, rargs = {}, {}, {}, {}, {}, {}, {}, {}
local failed = 0
for _, raw in ipairs(entries) do
  local decoded, w = pcall(cjson.decode, raw)
  if not decoded then failed = failed + 1; w = {} end
  for i = 1, #w, 5 do
    local op, key, x, member, t = w[i], w[i + 1], w[i + 2], w[i + 3], w[i + 4]
    if op == 'z' then
      local a = zargs[key]
      if not a then a = {}; zargs[key] = a; zkeys[#zkeys + 1] = key end
      -- arguments keep queue order, so a member added twice ends with its last score, as before
      a[#a + 1] = x; a[#a + 1] = member
    elseif op == 'r' then
      local a = rargs[key]
      if not a then a = {}; rargs[key] = a; rkeys[#rkeys + 1] = key end
      a[#a + 1] = member
    else
      if not iby[key] then iby[key] = 0; ikeys[#ikeys + 1] = key end
      iby[key] = iby[key] + tonumber(x)
    end
    -- the first TTL of a key wins; NX below keeps an expiry the key already has
    if t ~= '' and not ttl[key] then ttl[key] = t; tkeys[#tkeys + 1] = key end
  end
end
-- pcall: one bad key (wrong type) must not drop the other writes of the popped entries
local function call(...)
  local ok = redis.pcall(...)
  if type(ok) == 'table' and ok.err then failed = failed + 1 end
end
for _, key in ipairs(zkeys) do
  local a = zargs[key]
  -- unpack has a stack limit: at most 500 members per ZADD
  for s = 1, #a, 1000 do call('ZADD', key, unpack(a, s, math.min(s + 999, #a))) end
end
for _, key in ipairs(rkeys) do
  local a = rargs[key]
  for s = 1, #a, 1000 do call('ZREM', key, unpack(a, s, math.min(s + 999, #a))) end
end
for _, key in ipairs(ikeys) do call('INCRBY', key, string.format('%.0f', iby[key])) end
for _, key in ipairs(tkeys) do call('PEXPIRE', key, ttl[key], 'NX') end
return {#entries, redis.call('LLEN', KEYS[1]), failed}
`,
};
