import type { LuaScript } from './lua-script.js';

export const compareAndSwapScript: LuaScript = {
  name: 'compareAndSwap',
  numberOfKeys: 1,
  lua: `
-- compareAndSwap: versioned write.
-- KEYS[1]  versioned value: hash {v = version, d = data}
-- ARGV[1]  expected version (0 = the key must be absent)
-- ARGV[2]  data
-- ARGV[3]  ttlMs, or '' for no expiry (an earlier TTL is removed, as SET does)
-- Returns  {1, newVersion} on success; {0, currentVersion} when the versions differ (0 = absent)
local cur = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if cur ~= tonumber(ARGV[1]) then return {0, cur} end
local nextVersion = cur + 1
redis.call('HSET', KEYS[1], 'd', ARGV[2], 'v', nextVersion)
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('PERSIST', KEYS[1])
end
return {1, nextVersion}
`,
};
