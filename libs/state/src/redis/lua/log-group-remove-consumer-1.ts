import type { LuaScript } from './lua-script.js';

/** Removes a consumer from a group only while it holds no pending message (DELCONSUMER would drop them). */
export const logGroupRemoveConsumerScript: LuaScript = {
  name: 'logGroupRemoveConsumer',
  numberOfKeys: 1,
  lua: `
-- logGroupRemoveConsumer
-- KEYS[1]  the log (a stream)
-- ARGV[1]  group, ARGV[2] consumer
-- Returns  1 when removed (or absent), 0 when it still holds pending messages
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1
`,
};
