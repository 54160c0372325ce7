import type { LuaScript } from './lua-script.js';

export const deleteIfValueScript: LuaScript = {
  name: 'deleteIfValue',
  numberOfKeys: 1,
  lua: `
-- deleteIfValue: delete a plain value only while it is still the given one (a claim taken by this
-- caller, not one taken again since).
-- KEYS[1]  key (string)
-- ARGV[1]  value it must still hold
-- Returns  1 deleted, 0 absent or holding something else (left as it is)
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`,
};
