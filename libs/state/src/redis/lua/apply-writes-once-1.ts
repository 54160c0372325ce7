import type { LuaScript } from './lua-script.js';
import { applyWriteGroups, checkWriteGroups } from './write-groups.js';

/** One slot's share of a staged batch (logAckStage), applied at most once: a marker in that slot records it. */
export const applyWritesOnceScript: LuaScript = {
  name: 'applyWritesOnce',
  numberOfKeys: 1,
  variadicKeys: true,
  lua: `
-- applyWritesOnce
-- KEYS[1]   the marker (batch id, in the slot of the keys); KEYS[2..] the keys written
-- ARGV[1]   how long the marker lasts (ms); from ARGV[2], the groups of writes (write-groups.ts)
-- Returns {1, writes that failed} when applied, {0, 0} when the marker was there (applied before).
${checkWriteGroups('applyWritesOnce', '2')}
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return {0, 0} end
${applyWriteGroups('2')}
return {1, failed}
`,
};
