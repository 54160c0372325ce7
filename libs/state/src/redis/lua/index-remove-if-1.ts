import type { LuaScript } from './lua-script.js';

export const indexRemoveIfScript: LuaScript = {
  name: 'indexRemoveIf',
  numberOfKeys: 1,
  lua: `
-- indexRemoveIf: remove a member of a sorted set only while its score is the given one.
-- KEYS[1]  index (sorted set)
-- ARGV[1]  member
-- ARGV[2]  score the member must still have
-- Returns  1 removed, 0 absent or scored otherwise (left as it is)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
`,
};
