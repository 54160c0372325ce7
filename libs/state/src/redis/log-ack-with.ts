import { randomUUID } from 'node:crypto';
import { isCluster, type RedisClient } from './connection.js';
import type { BulkWriteOp, StateKey } from '../state-store.js';
import { compareLogIds } from '../log-ids.js';
import { checkBulk, checkWrites } from '../write-ops.js';
import { applyWritesOnceScript, logAckStageScript, logAckWithScript } from './lua/index.js';
import { groupBySlot } from './slots.js';
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

/** The writes grouped by key, so a batch of many records touches each index and counter with one command (increments summed). */
function groupByKey(writes: readonly BulkWriteOp[], render: (key: StateKey) => string): [string, KeyWrites][] {
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
  return [...byKey];
}

/** Keys and write groups (lua/write-groups.ts) of a script whose KEYS[1] is its own (the log, a marker): Redis parses no JSON. */
function writeGroups(byKey: readonly [string, KeyWrites][]): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const args: string[] = [];
  for (const [key, g] of byKey) {
    keys.push(key);
    const k = String(keys.length + 1);
    if (g.adds.length > 0) args.push('z', k, g.ttl, String(g.adds.length / 2), ...g.adds);
    if (g.counted) args.push('i', k, g.ttl, g.by.toFixed(0));
    // Removals after the additions of the same batch, as the writes were ordered by their callers.
    if (g.removes.length > 0) args.push('r', k, String(g.removes.length), ...g.removes);
  }
  return { keys, args };
}

/** Where a log's staged batches live (Redis Cluster): beside the log, in its slot. */
function stagedKey(log: string): string {
  return `${log}:staged`;
}

/** A batch staged in the log's slot: when, and its writes split per slot. */
interface StagedBatch {
  at: number;
  slots: { keys: string[]; args: string[] }[];
}

/** How long a slot remembers it applied its share of a staged batch; a batch left staged longer may be applied twice. */
const APPLIED_MARKER_MS = 7 * 24 * 3600 * 1000;

/** The marker of a batch in the slot of `key` (the store renders it in that key's scope). */
export type MarkerKey = (key: string, batchId: string) => string;

export async function logAckWith(
  client: RedisClient,
  log: string,
  group: string,
  consumer: string,
  ids: readonly string[],
  writes: readonly BulkWriteOp[],
  render: (key: StateKey) => string,
  marker: MarkerKey,
): Promise<{ applied: boolean; failed: number }> {
  if (ids.length === 0) throw new RangeError('logGroupAckWith: no message ids');
  const byKey = groupByKey(writes, render);
  // In id order: the script reads the consumer's pending messages between the first and the last.
  const sorted = [...ids].sort(compareLogIds);
  if (isCluster(client)) {
    const batchId = randomUUID();
    const staged: StagedBatch = { at: Date.now(), slots: groupBySlot(byKey, ([key]) => key).map(writeGroups) };
    if (!(await stageBatch(client, log, group, consumer, sorted, batchId, staged))) return { applied: false, failed: 0 };
    return { applied: true, failed: await applyStaged(client, log, batchId, staged, marker) };
  }
  const { keys, args } = writeGroups(byKey);
  const reply = await runScript(client, logAckWithScript, { keys: [log, ...keys], args: [group, consumer, String(ids.length), ...sorted, ...args] });
  const [applied = 0, failed = 0] = numbers(reply, 2, 'logAckWith');
  return { applied: applied === 1, failed };
}

/** Redis Cluster: stages the batch's writes and acknowledges its messages, in the log's slot; false when some message is no longer the consumer's. */
export async function stageBatch(
  client: RedisClient,
  log: string,
  group: string,
  consumer: string,
  sortedIds: readonly string[],
  batchId: string,
  staged: StagedBatch,
): Promise<boolean> {
  const reply = await runScript(client, logAckStageScript, {
    keys: [log, stagedKey(log)],
    args: [group, consumer, String(sortedIds.length), ...sortedIds, batchId, JSON.stringify(staged)],
  });
  return numbers(reply, 2, 'logAckStage')[0] === 1;
}

/** Applies each slot's share once (its marker says whether it was), then forgets the batch. Returns the writes Redis refused. */
async function applyStaged(client: RedisClient, log: string, batchId: string, staged: StagedBatch, marker: MarkerKey): Promise<number> {
  const replies = await Promise.all(
    staged.slots
      .filter((slot) => slot.keys.length > 0)
      .map((slot) =>
        runScript(client, applyWritesOnceScript, {
          keys: [marker(slot.keys[0] as string, batchId), ...slot.keys],
          args: [String(APPLIED_MARKER_MS), ...slot.args],
        }),
      ),
  );
  await client.hdel(stagedKey(log), batchId);
  return replies.reduce<number>((sum, reply) => sum + (numbers(reply, 2, 'applyWritesOnce')[1] ?? 0), 0);
}

/**
 * Redis Cluster: finishes batches staged at least `minIdleMs` ago whose consumer did not (it
 * died between the two steps), one page of them per call. A batch still being applied by its
 * consumer is safe to finish too: each slot's marker lets one of them apply its share.
 */
export async function finishStagedBatches(client: RedisClient, log: string, minIdleMs: number, marker: MarkerKey): Promise<number> {
  if (!isCluster(client)) return 0;
  const [, fields] = await client.hscan(stagedKey(log), '0', 'COUNT', 100);
  let finished = 0;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const batchId = fields[i] as string;
    const staged = parseStaged(fields[i + 1] as string);
    if (staged === null) await client.hdel(stagedKey(log), batchId);
    else if (Date.now() - staged.at >= minIdleMs) {
      await applyStaged(client, log, batchId, staged, marker);
      finished++;
    }
  }
  return finished;
}

function parseStaged(json: string): StagedBatch | null {
  try {
    const staged = JSON.parse(json) as StagedBatch;
    return typeof staged.at === 'number' && Array.isArray(staged.slots) ? staged : null;
  } catch {
    return null;
  }
}
