import type { LuaScript } from './lua-script.js';
import { ACK_AND_DELETE, RETURN_UNLESS_PENDING } from './log-batch.js';
import { applyWriteGroups, checkWriteGroups } from './write-groups.js';

/**
 * Applies a consumer's batch of writes and acknowledges (and deletes) the messages it came from,
 * in one step, only while every message is still pending for that consumer: a batch handed out
 * twice is applied once. Writes arrive grouped by key, as the caller aggregated them.
 */
export const logAckWithScript: LuaScript = {
  name: 'logAckWith',
  numberOfKeys: 1,
  variadicKeys: true,
  lua: `
-- logAckWith
-- KEYS[1]   the log (a stream); KEYS[2..] the keys written
-- ARGV[1]   group, ARGV[2] consumer, ARGV[3] n = number of message ids, ARGV[4 .. 3+n] the ids,
--           the lowest first and the highest last
-- then, until the end of ARGV, the groups of writes (write-groups.ts)
-- Returns {1, writes that failed} when applied, {0, 0} when some message is no longer pending
-- for the consumer (nothing written).
local log, group, consumer, n = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
${RETURN_UNLESS_PENDING}
${checkWriteGroups('logAckWith', '4 + n')}
${applyWriteGroups('4 + n')}
${ACK_AND_DELETE}
return {1, failed}
`,
};
