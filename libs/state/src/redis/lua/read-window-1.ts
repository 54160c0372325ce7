import type { LuaScript } from './lua-script.js';

/** One script so the count and its reset time come from the same instant (server time). */
export const readWindowScript: LuaScript = {
  name: 'readWindow',
  numberOfKeys: 1,
  readOnly: true,
  lua: `
-- readWindow: the current count of a window counter.
-- KEYS[1]  counter (string holding an integer)
-- Returns  {count, resetAtMs}; {0, -1} when no window is open; resetAtMs -1 when the key has no expiry
local raw = redis.call('GET', KEYS[1])
if not raw then return {0, -1} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return {tonumber(raw), -1} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {tonumber(raw), now + ttl}
`,
};
