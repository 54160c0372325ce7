import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './connection.js';
import { getValues } from './values.js';
import { parseKey, renderKindPattern } from '../keys.js';
import { scanCount } from '../store-args.js';
import type { ScanOptions, ScanPage, StateKey } from '../state-store.js';

/*
 * SCAN over one kind's plain values. SCAN guarantees every key present for the whole scan is
 * returned at least once; a key may appear twice if the keyspace is rehashed mid-scan, so
 * callers that need exactness dedupe by key. Window counters are strings too: keep a kind to
 * one key family, as state-store.ts requires.
 */

/** Rounds of SCAN one page may use to fill `count` before it returns a short page. */
const MAX_ROUNDS_PER_PAGE = 10;

export interface ScanArgs {
  cursor: string;
  pattern: string;
  count: number;
}

export function scanArgs(prefix: string, kind: string, opts?: ScanOptions): ScanArgs {
  const scope = { namespace: opts?.namespace, tenant: opts?.tenant };
  return { cursor: opts?.cursor ?? '0', pattern: renderKindPattern(prefix, kind, scope), count: scanCount(opts) };
}

type ScanStep = (cursor: string) => Promise<[next: string, keys: string[]]>;

/**
 * One page. On Redis Cluster SCAN sees one node's keys, so the page walks the primaries in turn
 * (sorted by address) and the cursor is `<primary>-<its cursor>`: a page started before a
 * resharding or failover may miss or repeat keys that moved, as a rehash may on one node.
 */
export async function scanKind(client: RedisClient, prefix: string, kind: string, opts?: ScanOptions): Promise<ScanPage> {
  const args = scanArgs(prefix, kind, opts);
  const step =
    (node: Redis | RedisClient): ScanStep =>
    (cursor) =>
      node.scan(cursor, 'MATCH', args.pattern, 'COUNT', args.count, 'TYPE', 'string');
  if (!isCluster(client)) return scanPage(client, prefix, args, step(client), args.cursor);
  const primaries = client.nodes('master').sort((a, b) => address(a).localeCompare(address(b)));
  const [at, nodeCursor] = splitClusterCursor(args.cursor);
  let node = at;
  let cursor = nodeCursor;
  const page: ScanPage = { entries: [], cursor: null };
  while (node < primaries.length) {
    const primary = primaries[node] as Redis;
    const part = await scanPage(client, prefix, { ...args, count: args.count - page.entries.length }, step(primary), cursor);
    page.entries.push(...part.entries);
    if (part.cursor !== null) return { entries: page.entries, cursor: `${node}-${part.cursor}` };
    node++;
    cursor = '0';
    if (page.entries.length >= args.count) break;
  }
  return { entries: page.entries, cursor: node < primaries.length ? `${node}-0` : null };
}

function splitClusterCursor(cursor: string): [node: number, cursor: string] {
  const m = /^(\d+)-(\d+)$/.exec(cursor);
  return m === null ? [0, '0'] : [Number(m[1]), m[2] ?? '0'];
}

function address(node: Redis): string {
  return `${node.options.host ?? ''}:${node.options.port ?? ''}`;
}

async function scanPage(client: RedisClient, prefix: string, args: ScanArgs, step: ScanStep, from: string): Promise<ScanPage> {
  const found = new Map<string, { key: StateKey; value: string }>();
  let cursor = from;
  // MATCH filters after COUNT slots are visited, so one round may find little in a busy keyspace.
  for (let round = 0; round < MAX_ROUNDS_PER_PAGE; round++) {
    const [next, keys] = await step(cursor);
    cursor = next;
    if (keys.length > 0) {
      const values = await getValues(client, keys);
      keys.forEach((rendered, i) => {
        const value = values[i];
        const key = parseKey(prefix, rendered);
        // null value: the key expired between SCAN and MGET.
        if (value != null && key !== null) found.set(rendered, { key, value });
      });
    }
    if (cursor === '0' || found.size >= args.count) break;
  }
  return { entries: [...found.values()], cursor: cursor === '0' ? null : cursor };
}
