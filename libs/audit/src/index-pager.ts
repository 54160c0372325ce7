import type { IndexEntry, StateKey, StateStore } from '@sluice/state';
import { memberPosition } from './record-ref.js';

/** Entries re-read at a tied score when resuming, so entries removed meanwhile cannot cause a gap. */
const TIE_MARGIN = 16;

export interface PagerStart {
  /** Inclusive score bounds. */
  min?: number;
  max?: number;
  /** Resume strictly after this entry (score, compact-id position), e.g. a cursor. */
  after?: { score: number; position: string };
  /** Index entries to skip before the first one returned (an offset the index answers exactly). */
  offset?: number;
}

/**
 * Walks one time index newest first in batches with keyset paging: each batch resumes below the
 * last entry seen, so appends of newer records while paging neither shift nor repeat entries.
 * Many entries at one score are walked with an offset among the ties (less a margin), and
 * anything at or above the last position is dropped, so no entry is returned twice.
 */
export class IndexPager {
  private max: number | undefined;
  private lastPosition: string | undefined;
  private tiesSeen = 0;
  private pendingOffset: number;
  private finished = false;

  constructor(
    private readonly store: StateStore,
    private readonly index: StateKey,
    private readonly start: PagerStart,
  ) {
    this.max = start.max;
    if (start.after !== undefined && (start.max === undefined || start.after.score <= start.max)) {
      this.max = start.after.score;
      this.lastPosition = start.after.position;
    }
    this.pendingOffset = start.offset ?? 0;
  }

  get done(): boolean {
    return this.finished;
  }

  /** The next entries, newest first (score desc, then member desc); possibly none before the end. */
  async next(batchSize: number): Promise<IndexEntry[]> {
    if (this.finished) return [];
    const offset = this.pendingOffset > 0 ? this.pendingOffset : Math.max(0, this.tiesSeen - TIE_MARGIN);
    // Resuming re-reads the entries seen at the top of the range (at least the resume entry
    // itself): read that many more, so a batch still holds batchSize new entries.
    const reread = this.lastPosition === undefined ? 0 : Math.max(1, this.tiesSeen - offset);
    const limit = Math.max(batchSize, TIE_MARGIN * 2) + reread;
    this.pendingOffset = 0;
    const raw = await this.store.indexRange(this.index, {
      ...(this.start.min !== undefined ? { min: this.start.min } : {}),
      ...(this.max !== undefined ? { max: this.max } : {}),
      rev: true,
      offset,
      limit,
    });
    if (raw.length < limit) this.finished = true;
    const entries = raw.filter((e) => !this.seen(e));
    const last = raw.at(-1);
    if (last !== undefined) {
      // Everything from the top of the range down to `last` has last.score when it equals max.
      this.tiesSeen = last.score === this.max ? offset + raw.length : raw.filter((e) => e.score === last.score).length;
      // A batch of entries all above the resume point (e.g. a cursor deep in a run of ties) must not move it back up.
      if (!this.seen(last)) {
        this.max = last.score;
        this.lastPosition = memberPosition(last.member);
      }
    }
    return entries;
  }

  private seen(entry: IndexEntry): boolean {
    return this.lastPosition !== undefined && entry.score === this.max && memberPosition(entry.member) >= this.lastPosition;
  }
}
