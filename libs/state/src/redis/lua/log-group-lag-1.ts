import type { LuaScript } from './lua-script.js';

/**
 * A group's pending and undelivered counts. Redis's own `lag` (entries added minus entries read)
 * keeps counting messages the stream trimmed before the group read them, for good: undelivered is
 * instead what still exists after the group's last-delivered id. Counting costs a walk of the
 * stream, so it is bounded: at most ARGV[2] + 1 entries from either end.
 */
export const logGroupLagScript: LuaScript = {
  name: 'logGroupLag',
  numberOfKeys: 1,
  readOnly: true,
  lua: `
-- logGroupLag
-- KEYS[1]  the log (a stream)
-- ARGV[1]  group, ARGV[2] most entries counted from either end of the stream
-- Returns  {pending, undelivered}
local mine
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  local field = {}
  for i = 1, #g, 2 do field[g[i]] = g[i + 1] end
  if field['name'] == ARGV[1] then mine = field break end
end
if mine == nil then return redis.error_reply('NOGROUP No such consumer group ' .. ARGV[1]) end
local pending = mine['pending']
local last = mine['last-delivered-id']
local first = redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', 1)[1]
if first == nil then return {pending, 0} end
local len = redis.call('XLEN', KEYS[1])
-- The stream was trimmed past the group: everything it still holds is undelivered.
if first[1] == redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1][1] then return {pending, len} end
local cap = tonumber(ARGV[2])
local after = #redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', cap + 1)
if after <= cap then return {pending, after} end
local upto = #redis.call('XRANGE', KEYS[1], '-', last, 'COUNT', cap + 1)
if upto <= cap then return {pending, len - upto} end
-- Deep in a long stream: between the bounds, Redis's lag (which may overcount) when it has one.
local most = len - cap - 1
local lag = mine['lag']
if type(lag) == 'number' and lag < most then most = math.max(lag, cap + 1) end
return {pending, most}
`,
};
