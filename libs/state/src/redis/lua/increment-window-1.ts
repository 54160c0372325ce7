import type { LuaScript } from './lua-script.js';

/** Embedded as a TS string so tsc ships it in dist (it does not copy .lua files). */
export const incrementWindowScript: LuaScript = {
  name: 'incrementWindow',
  numberOfKeys: 1,
  lua: `
-- incrementWindow: fixed-window counter anchored at the first hit.
-- KEYS[1]  counter (string holding an integer)
-- ARGV[1]  by (integer)
-- ARGV[2]  windowMs (positive integer)
-- ARGV[3]  limit, or '' for none
-- ARGV[4]  optional: apply only to the open window ending at this instant (within half a window)
-- Returns  {count, allowed (1|0), resetAtMs (server time)}
-- A refused call changes nothing: no INCRBY and no PEXPIRE, so it neither counts nor extends.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local by = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local raw = redis.call('GET', KEYS[1])
local count = 0
if raw then count = tonumber(raw) end
local ttl = -1
if raw then ttl = redis.call('PTTL', KEYS[1]) end
if ARGV[4] and (ttl < 0 or math.abs(now + ttl - tonumber(ARGV[4])) * 2 >= windowMs) then
  if ttl < 0 then ttl = windowMs end
  return {count, 0, now + ttl}
end
if ARGV[3] ~= '' and count + by > tonumber(ARGV[3]) then
  -- no open window: report when one opened now would end
  if ttl < 0 then ttl = windowMs end
  return {count, 0, now + ttl}
end
count = redis.call('INCRBY', KEYS[1], by)
if ttl < 0 then
  -- created by this call (or a counter that lost its expiry): anchor the window here
  redis.call('PEXPIRE', KEYS[1], windowMs)
  ttl = windowMs
end
return {count, 1, now + ttl}
`,
};
