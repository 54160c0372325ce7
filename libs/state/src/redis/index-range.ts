import type { RedisClient } from './connection.js';
import { rangeArgs, scoreBounds } from '../store-args.js';
import type { IndexEntry, IndexRangeQuery } from '../state-store.js';
import { entriesOf, scoreArg } from './time-index.js';

/* Reads and bulk removal by score range on a time index: single commands, atomic as they are. */

/** ZRANGE <key> <min> <max> BYSCORE [REV] LIMIT <offset> <limit> WITHSCORES (REV takes max first). */
export function indexRangeArgs(key: string, query: IndexRangeQuery): (string | number)[] {
  const { min, max, rev, offset, limit } = rangeArgs(query);
  const [from, to] = rev ? [max, min] : [min, max];
  return [key, scoreArg(from), scoreArg(to), 'BYSCORE', ...(rev ? ['REV'] : []), 'LIMIT', offset, limit, 'WITHSCORES'];
}

export async function indexRange(client: RedisClient, key: string, query: IndexRangeQuery): Promise<IndexEntry[]> {
  const args = indexRangeArgs(key, query);
  // Nothing can be returned: skip the round trip.
  if (query.limit === 0) return [];
  return entriesOf(await client.call('ZRANGE', ...args), 'indexRange');
}

/** Unbounded ends become -inf/+inf. */
export function scoreRangeArgs(min: number | undefined, max: number | undefined): [string, string] {
  const bounds = scoreBounds(min, max);
  return [scoreArg(bounds.min), scoreArg(bounds.max)];
}

export async function indexCount(client: RedisClient, key: string, min?: number, max?: number): Promise<number> {
  return client.zcount(key, ...scoreRangeArgs(min, max));
}

export async function indexRemoveRange(client: RedisClient, key: string, min: number, max: number): Promise<number> {
  return client.zremrangebyscore(key, ...scoreRangeArgs(min, max));
}
