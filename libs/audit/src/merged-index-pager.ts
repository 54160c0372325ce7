import type { IndexEntry, StateKey, StateStore } from '@sluice/state';
import { IndexPager, type PagerStart } from './index-pager.js';

/** What runQuery walks: one index, or the shards of one (merged). */
export interface TimeIndexPager {
  readonly done: boolean;
  next(batchSize: number): Promise<IndexEntry[]>;
}

/** A pager over an index's keys; an offset is honoured by a single key only (the caller skips otherwise). */
export function openPager(store: StateStore, keys: readonly StateKey[], start: PagerStart): TimeIndexPager {
  const [only] = keys;
  if (keys.length === 1 && only !== undefined) return new IndexPager(store, only, start);
  const { offset: _offset, ...rest } = start;
  return new MergedIndexPager(keys.map((key) => new IndexPager(store, key, rest)));
}

interface Shard {
  pager: IndexPager;
  buffer: IndexEntry[];
  at: number;
}

/**
 * The shards of one index walked as one, newest first: each shard's pager reads ahead a batch,
 * and an entry is handed out only when every shard not yet exhausted has one buffered to compare
 * it with, so the order (score, then member, descending) is the one a single index would have.
 * A cursor works as on one index: each shard resumes strictly after the same position.
 */
class MergedIndexPager implements TimeIndexPager {
  private readonly shards: Shard[];

  constructor(pagers: IndexPager[]) {
    this.shards = pagers.map((pager) => ({ pager, buffer: [], at: 0 }));
  }

  get done(): boolean {
    return this.shards.every((s) => s.pager.done && s.at >= s.buffer.length);
  }

  async next(batchSize: number): Promise<IndexEntry[]> {
    // Each shard reads its share of a batch (a pager reads at least a few dozen anyway).
    const perShard = Math.ceil(batchSize / this.shards.length);
    const out: IndexEntry[] = [];
    while (out.length < batchSize) {
      const empty = this.shards.filter((s) => s.at >= s.buffer.length && !s.pager.done);
      if (empty.length > 0) {
        await Promise.all(
          empty.map(async (s) => {
            s.buffer = await s.pager.next(perShard);
            s.at = 0;
          }),
        );
        // A pager may answer nothing before its end (ties it had seen): read again.
        continue;
      }
      let best: Shard | null = null;
      for (const s of this.shards) {
        const head = s.buffer[s.at];
        if (head === undefined) continue;
        const top = best?.buffer[best.at];
        if (top === undefined || head.score > top.score || (head.score === top.score && head.member > top.member)) best = s;
      }
      if (best === null) break; // every shard exhausted
      out.push(best.buffer[best.at++] as IndexEntry);
    }
    return out;
  }
}
