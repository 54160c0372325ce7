import type { LuaScript } from './lua-script.js';
import { ACK_AND_DELETE, RETURN_UNLESS_PENDING } from './log-batch.js';

/**
 * Redis Cluster's logAckWith, first step: a batch's writes span slots, so no script can apply
 * them with the acknowledgement. This one stages them in the log's slot instead, in one step with
 * the acknowledgement, only while every message is still pending for the consumer; each slot's
 * share is then applied once (applyWritesOnce), and a batch whose consumer died in between is
 * finished by whoever finds it staged.
 */
export const logAckStageScript: LuaScript = {
  name: 'logAckStage',
  numberOfKeys: 2,
  lua: `
-- logAckStage
-- KEYS[1]   the log (a stream); KEYS[2] its staged batches (hash: batch id -> writes), same slot
-- ARGV[1]   group, ARGV[2] consumer, ARGV[3] n = number of message ids, ARGV[4 .. 3+n] the ids,
--           the lowest first and the highest last; ARGV[4+n] batch id; ARGV[5+n] the staged writes
-- Returns {1, 0} when staged and acknowledged, {0, 0} when some message is no longer pending for
-- the consumer (nothing staged).
local log, group, consumer, n = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
${RETURN_UNLESS_PENDING}
redis.call('HSET', KEYS[2], ARGV[4 + n], ARGV[5 + n])
${ACK_AND_DELETE}
return {1, 0}
`,
};
