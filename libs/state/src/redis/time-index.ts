import type { RedisClient } from './connection.js';
import { checkScore, maxMembersArg, popLimit } from '../store-args.js';
import type { BoundedAddResult, IndexEntry } from '../state-store.js';
import { indexAddBoundedScript, indexPopDueScript, indexRemoveIfScript } from './lua/index.js';
import { runScript, type ScriptCall } from './scripts.js';

/* Time-ordered indexes: a sorted set of member → score (usually epoch ms). */

/** Redis spells infinities '+inf'/'-inf'; String(Infinity) would be rejected. */
export function scoreArg(score: number): string {
  checkScore(score);
  if (score === Infinity) return '+inf';
  if (score === -Infinity) return '-inf';
  return String(score);
}

/** Inverse of scoreArg for scores Redis sends back as strings ('inf', '-inf', '1.5', ...). */
export function parseScore(raw: string): number {
  const lower = raw.toLowerCase();
  if (lower === 'inf' || lower === '+inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  return Number(raw);
}

export async function indexAdd(client: RedisClient, key: string, member: string, score: number): Promise<void> {
  await client.zadd(key, scoreArg(score), member);
}

export function indexAddBoundedArgs(key: string, member: string, score: number, maxMembers: number): ScriptCall {
  return { keys: [key], args: [scoreArg(score), member, maxMembersArg(maxMembers)] };
}

const BOUNDED_RESULTS: readonly BoundedAddResult[] = ['added', 'present', 'full'];

export async function indexAddBounded(client: RedisClient, key: string, member: string, score: number, maxMembers: number): Promise<BoundedAddResult> {
  const reply = await runScript(client, indexAddBoundedScript, indexAddBoundedArgs(key, member, score, maxMembers));
  const result = BOUNDED_RESULTS[Number(reply)];
  if (result === undefined) throw new Error(`unexpected indexAddBounded reply: ${JSON.stringify(reply)}`);
  return result;
}

export async function indexRemove(client: RedisClient, key: string, member: string): Promise<boolean> {
  return (await client.zrem(key, member)) > 0;
}

export function indexRemoveIfArgs(key: string, member: string, score: number): ScriptCall {
  return { keys: [key], args: [member, scoreArg(score)] };
}

export async function indexRemoveIf(client: RedisClient, key: string, member: string, score: number): Promise<boolean> {
  return Number(await runScript(client, indexRemoveIfScript, indexRemoveIfArgs(key, member, score))) === 1;
}

export function indexPopDueArgs(key: string, maxScore: number, limit: number): ScriptCall {
  return { keys: [key], args: [scoreArg(maxScore), popLimit(limit)] };
}

export async function indexPopDue(client: RedisClient, key: string, maxScore: number, limit: number): Promise<IndexEntry[]> {
  const call = indexPopDueArgs(key, maxScore, limit);
  // Nothing can be popped: skip the round trip.
  if (limit === 0) return [];
  return entriesOf(await runScript(client, indexPopDueScript, call), 'indexPopDue');
}

/**
 * A WITHSCORES reply as entries. Scripts (and RESP2) reply flat {member1, score1, ...}; a raw
 * RESP3 command replies {{member1, score1}, ...}, which one flat() turns into the same.
 */
export function entriesOf(reply: unknown, op: string): IndexEntry[] {
  const flat: unknown = Array.isArray(reply) ? reply.flat() : reply;
  if (!Array.isArray(flat) || flat.length % 2 !== 0) throw new Error(`unexpected ${op} reply: ${JSON.stringify(reply)}`);
  const entries: IndexEntry[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    entries.push({ member: String(flat[i]), score: parseScore(String(flat[i + 1])) });
  }
  return entries;
}
