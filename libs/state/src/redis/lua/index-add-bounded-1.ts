import type { LuaScript } from './lua-script.js';

export const indexAddBoundedScript: LuaScript = {
  name: 'indexAddBounded',
  numberOfKeys: 1,
  lua: `
-- indexAddBounded: add a member to a sorted set only while it has fewer than max members.
-- KEYS[1]  index (sorted set)
-- ARGV[1]  score
-- ARGV[2]  member
-- ARGV[3]  max members (positive integer)
-- Returns  0 added, 1 already present (left unchanged), 2 full (nothing added)
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  return 1
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 2
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
return 0
`,
};
