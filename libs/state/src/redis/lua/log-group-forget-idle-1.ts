import type { LuaScript } from './lua-script.js';

/**
 * Removes the consumers of a group that hold no pending message and have been idle at least a
 * while: those of processes killed before they could remove their own. Checked and removed in
 * one script, so no consumer loses a message it read in between.
 */
export const logGroupForgetIdleScript: LuaScript = {
  name: 'logGroupForgetIdle',
  numberOfKeys: 1,
  lua: `
-- logGroupForgetIdle
-- KEYS[1]  the log (a stream)
-- ARGV[1]  group, ARGV[2] minimum idle time (ms), ARGV[3] most to remove (a pile of them goes over several calls)
-- Returns  how many consumers were removed
local minIdle = tonumber(ARGV[2])
local most = tonumber(ARGV[3])
local removed = 0
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  if removed >= most then break end
  local field = {}
  for i = 1, #consumer, 2 do field[consumer[i]] = consumer[i + 1] end
  if field['pending'] == 0 and field['idle'] >= minIdle then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], field['name'])
    removed = removed + 1
  end
end
return removed
`,
};
