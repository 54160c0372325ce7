/*
 * Fragments of the scripts that acknowledge a consumer's batch of a log (logAckWith and
 * logAckStage). Both expect `log`, `group`, `consumer` and `n` as locals and the batch's message
 * ids in ARGV[4 .. 3+n], the lowest first and the highest last.
 */

/** Lua returning {0, 0} from the script unless every id is still pending for the consumer. */
export const RETURN_UNLESS_PENDING = `
-- Every id pending for this consumer: one range read over the batch's ids (the consumer's other
-- messages in that range count against the cap), each id checked exactly when it overflows.
local cap = 2 * n + 100
local mine = {}
local held = redis.call('XPENDING', log, group, ARGV[4], ARGV[3 + n], cap, consumer)
for _, p in ipairs(held) do mine[p[1]] = true end
for i = 4, 3 + n do
  if not mine[ARGV[i]] then
    if #held < cap then return {0, 0} end
    local p = redis.call('XPENDING', log, group, ARGV[i], ARGV[i], 1)[1]
    if not p or p[2] ~= consumer then return {0, 0} end
  end
end
`;

/** Lua acknowledging the ids and deleting them from the log. */
export const ACK_AND_DELETE = `
for s = 4, 3 + n, 1000 do
  local last = math.min(s + 999, 3 + n)
  redis.call('XACK', log, group, unpack(ARGV, s, last))
  redis.call('XDEL', log, unpack(ARGV, s, last))
end
`;
