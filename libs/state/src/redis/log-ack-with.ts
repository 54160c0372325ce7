import type { Redis } from 'ioredis';
import type { BulkWriteOp, StateKey } from '../state-store.js';
import { compareLogIds } from '../log-ids.js';
import { checkBulk, checkWrites } from '../write-ops.js';
import { logAckWithScript } from './lua/index.js';
import { numbers, runScript } from './scripts.js';
import { scoreArg } from './time-index.js';

interface KeyWrites {
  /** ZADD arguments (score, member, ...), in the order given: a member added twice keeps its last score. */
  adds: string[];
  removes: string[];
  by: number;
  counted: boolean;
  /** The first TTL given for the key (PEXPIRE NX keeps an expiry the key already has). */
  ttl: string;
}

/**
 * The script's arguments: the writes grouped by key, so a batch of many records touches each
 * index and counter with one command (increments summed), and Redis parses no JSON.
 */
function scriptArgs(writes: readonly BulkWriteOp[], render: (key: StateKey) => string): { keys: string[]; args: string[] } {
  const byKey = new Map<string, KeyWrites>();
  for (const w of checkWrites(checkBulk(writes))) {
    const key = render(w.key);
    let g = byKey.get(key);
    if (g === undefined) {
      g = { adds: [], removes: [], by: 0, counted: false, ttl: '' };
      byKey.set(key, g);
    }
    if (g.ttl === '' && w.ttl !== undefined) g.ttl = String(w.ttl);
    if (w.op === 'indexAdd') g.adds.push(scoreArg(w.score), w.member);
    else if (w.op === 'indexRemove') g.removes.push(w.member);
    else if (w.op === 'increment') {
      g.by += w.by;
      g.counted = true;
    }
  }
  const keys: string[] = [];
  const args: string[] = [];
  for (const [key, g] of byKey) {
    keys.push(key);
    const k = String(keys.length + 1); // KEYS[1] is the log
    if (g.adds.length > 0) args.push('z', k, g.ttl, String(g.adds.length / 2), ...g.adds);
    if (g.counted) args.push('i', k, g.ttl, g.by.toFixed(0));
    // Removals after the additions of the same batch, as the writes were ordered by their callers.
    if (g.removes.length > 0) args.push('r', k, String(g.removes.length), ...g.removes);
  }
  return { keys, args };
}

export async function logAckWith(
  client: Redis,
  log: string,
  group: string,
  consumer: string,
  ids: readonly string[],
  writes: readonly BulkWriteOp[],
  render: (key: StateKey) => string,
): Promise<{ applied: boolean; failed: number }> {
  if (ids.length === 0) throw new RangeError('logGroupAckWith: no message ids');
  const { keys, args } = scriptArgs(writes, render);
  // In id order: the script reads the consumer's pending messages between the first and the last.
  const sorted = [...ids].sort(compareLogIds);
  const reply = await runScript(client, logAckWithScript, { keys: [log, ...keys], args: [group, consumer, String(ids.length), ...sorted, ...args] });
  const [applied = 0, failed = 0] = numbers(reply, 2, 'logAckWith');
  return { applied: applied === 1, failed };
}
