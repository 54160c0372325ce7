import type { LuaScript } from './lua-script.js';

export const indexPopDueScript: LuaScript = {
  name: 'indexPopDue',
  numberOfKeys: 1,
  lua: `
-- indexPopDue: remove and return the due members of a time index, lowest score first.
-- KEYS[1]  time index (sorted set)
-- ARGV[1]  max score (inclusive; '+inf' allowed)
-- ARGV[2]  limit (positive integer)
-- Returns  flat {member1, score1, member2, score2, ...}
local items = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[2])
for i = 1, #items, 2 do
  redis.call('ZREM', KEYS[1], items[i])
end
return items
`,
};
