import type { Redis } from 'ioredis';
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

export async function scanKind(client: Redis, prefix: string, kind: string, opts?: ScanOptions): Promise<ScanPage> {
  const args = scanArgs(prefix, kind, opts);
  const found = new Map<string, { key: StateKey; value: string }>();
  let cursor = args.cursor;
  // MATCH filters after COUNT slots are visited, so one round may find little in a busy keyspace.
  for (let round = 0; round < MAX_ROUNDS_PER_PAGE; round++) {
    const [next, keys] = await client.scan(cursor, 'MATCH', args.pattern, 'COUNT', args.count, 'TYPE', 'string');
    cursor = next;
    if (keys.length > 0) {
      const values = await client.mget(...keys);
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
