import { MemoryStateStore, type IndexEntry, type StateKey } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { openPager } from '../src/merged-index-pager.js';
import { COMPACT_ID_LENGTH } from '../src/record-id.js';

const shardKey = (shard: number): StateKey => ({ kind: 'test-gix', namespace: '_', tenant: `#${shard}`, id: 'all' });

/** A member shaped like a global one: a compact-id-long position, then a scope code. */
const member = (i: number) => `${String(i).padStart(COMPACT_ID_LENGTH, '0')}s${i % 3}`;

const newestFirst = (a: IndexEntry, b: IndexEntry) => b.score - a.score || (a.member < b.member ? 1 : a.member > b.member ? -1 : 0);

async function walk(pager: ReturnType<typeof openPager>, batch: number): Promise<IndexEntry[]> {
  const out: IndexEntry[] = [];
  while (!pager.done) out.push(...(await pager.next(batch)));
  return out;
}

/*
 * The shards of a global index (a Redis Cluster) are walked as one index: the same entries, in
 * the order one index would give them (score, then member, descending), across runs of ties
 * spread over shards, from a cursor, within score bounds, whatever the batch size.
 */
describe('openPager over the shards of one index', () => {
  it('walks the shards as one index would be walked', async () => {
    const store = new MemoryStateStore();
    const all: IndexEntry[] = [];
    // 300 entries over 7 shards, scores with long runs of ties and some shards empty at the top.
    for (let i = 0; i < 300; i++) {
      const score = Math.floor(i / 40) * 1000 + (i % 5 === 0 ? 0 : i);
      const shard = Math.floor(i / 3) % 5; // ties fall in several shards; shards 5 and 6 stay empty
      await store.indexAdd(shardKey(shard), member(i), score);
      all.push({ member: member(i), score });
    }
    const keys = Array.from({ length: 7 }, (_, s) => shardKey(s));
    const expected = [...all].sort(newestFirst);
    for (const batch of [1, 7, 50, 1000]) {
      expect(await walk(openPager(store, keys, {}), batch), `batch ${batch}`).toEqual(expected);
    }
    // From a cursor (a position inside a run of ties), within bounds.
    const cursor = expected[123] as IndexEntry;
    const after = { score: cursor.score, position: cursor.member.slice(0, COMPACT_ID_LENGTH) };
    expect(await walk(openPager(store, keys, { after }), 13)).toEqual(expected.slice(124));
    const bounded = expected.filter((e) => e.score >= 2000 && e.score <= 5000);
    expect(await walk(openPager(store, keys, { min: 2000, max: 5000 }), 17)).toEqual(bounded);
    await store.close();
  });

  it('one key is read as before, an offset answered by the index', async () => {
    const store = new MemoryStateStore();
    for (let i = 0; i < 30; i++) await store.indexAdd(shardKey(0), member(i), i);
    const entries = await walk(openPager(store, [shardKey(0)], { offset: 10 }), 100);
    expect(entries.map((e) => e.score)).toEqual(Array.from({ length: 20 }, (_, i) => 19 - i));
    await store.close();
  });
});
