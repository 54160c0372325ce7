import type { IndexEntry } from '../state-store.js';

/**
 * The memory backend's sorted set: a member → score map plus the entries in Redis's ZSET order
 * (score, then member bytes), held in chunks of at most 2 × chunkSize. A write splices one chunk,
 * so it stays cheap at any size (one array of 100 000 entries took ~200 µs per splice at its
 * front, which the audit store's eviction does on every append once at its cap). Reads
 * binary-search the chunks' last entries, then one chunk: O(log n + n / chunkSize + page).
 */
export class SortedIndex {
  private readonly scores = new Map<string, number>();
  private chunks: IndexEntry[][] = [];
  private total = 0;

  /** Chunks split above 2 × chunkSize entries; small values are for tests. */
  constructor(private readonly chunkSize = 512) {}

  get size(): number {
    return this.total;
  }

  /** ZSCORE is not nil */
  has(member: string): boolean {
    return this.scores.has(member);
  }

  /** ZSCORE */
  score(member: string): number | undefined {
    return this.scores.get(member);
  }

  /** ZADD: adds or moves the member. */
  add(member: string, score: number): void {
    const old = this.scores.get(member);
    if (old === score) return;
    if (old !== undefined) this.removeAt(old, member);
    this.scores.set(member, score);
    this.insert({ member, score });
  }

  /** ZREM */
  remove(member: string): boolean {
    const score = this.scores.get(member);
    if (score === undefined) return false;
    this.scores.delete(member);
    this.removeAt(score, member);
    return true;
  }

  /** ZRANGE BYSCORE [REV] LIMIT: entries in [min, max], `offset` skipped, at most `limit`. */
  range(min: number, max: number, rev: boolean, offset: number, limit: number): IndexEntry[] {
    const [from, to] = this.bounds(min, max);
    // rev pages from the top of [from, to) downwards.
    const start = rev ? Math.max(from, to - offset - limit) : from + offset;
    const end = rev ? to - offset : Math.min(to, from + offset + limit);
    if (start >= end) return [];
    const page = this.slice(start, end, false).map((e) => ({ ...e }));
    return rev ? page.reverse() : page;
  }

  /** ZCOUNT */
  count(min: number, max: number): number {
    const [from, to] = this.bounds(min, max);
    return Math.max(0, to - from);
  }

  /** ZREMRANGEBYSCORE; returns how many were removed. */
  removeRange(min: number, max: number): number {
    const [from, to] = this.bounds(min, max);
    if (to <= from) return 0;
    for (const { member } of this.slice(from, to, true)) this.scores.delete(member);
    return to - from;
  }

  /** Removes and returns up to `limit` entries with score <= maxScore, lowest first. */
  popDue(maxScore: number, limit: number): IndexEntry[] {
    const due = Math.min(
      limit,
      this.rank((e) => e.score > maxScore),
    );
    if (due <= 0) return [];
    const popped = this.slice(0, due, true);
    for (const { member } of popped) this.scores.delete(member);
    return popped;
  }

  private insert(entry: IndexEntry): void {
    const atOrAfter = (e: IndexEntry) => !precedes(e, entry.score, entry.member);
    const c = Math.min(this.chunkWith(atOrAfter), this.chunks.length - 1);
    const chunk = this.chunks[c];
    if (chunk === undefined) {
      this.chunks.push([entry]);
    } else {
      chunk.splice(search(chunk, atOrAfter), 0, entry);
      if (chunk.length > 2 * this.chunkSize) this.chunks.splice(c + 1, 0, chunk.splice(this.chunkSize));
    }
    this.total++;
  }

  /** Removes the entry (score, member), which must be present. */
  private removeAt(score: number, member: string): void {
    const atOrAfter = (e: IndexEntry) => !precedes(e, score, member);
    const c = this.chunkWith(atOrAfter);
    const chunk = this.chunks[c];
    if (chunk === undefined) throw new Error('SortedIndex: member missing from its chunk');
    chunk.splice(search(chunk, atOrAfter), 1);
    if (chunk.length === 0) this.chunks.splice(c, 1);
    this.total--;
  }

  /** Entries at positions [start, end), removed from the index when `take` (their scores stay in the map). */
  private slice(start: number, end: number, take: boolean): IndexEntry[] {
    const out: IndexEntry[] = [];
    let offset = 0;
    for (let c = 0; c < this.chunks.length && offset < end; ) {
      const chunk = this.chunks[c] as IndexEntry[];
      const from = Math.max(0, start - offset);
      const to = Math.min(chunk.length, end - offset);
      offset += chunk.length;
      if (from < to) {
        if (take) {
          out.push(...chunk.splice(from, to - from));
          this.total -= to - from;
          offset -= to - from;
          end -= to - from;
          if (chunk.length === 0) {
            this.chunks.splice(c, 1);
            continue;
          }
        } else {
          for (let i = from; i < to; i++) out.push(chunk[i] as IndexEntry);
        }
      }
      c++;
    }
    return out;
  }

  /** [from, to): the positions of scores in [min, max]; to <= from when there are none. */
  private bounds(min: number, max: number): [number, number] {
    return [this.rank((e) => e.score >= min), this.rank((e) => e.score > max)];
  }

  /** Position of the first entry satisfying `atOrAfter` (monotone over the order); size when none. */
  private rank(atOrAfter: (e: IndexEntry) => boolean): number {
    const c = this.chunkWith(atOrAfter);
    let position = 0;
    for (let i = 0; i < c; i++) position += (this.chunks[i] as IndexEntry[]).length;
    const chunk = this.chunks[c];
    return chunk === undefined ? position : position + search(chunk, atOrAfter);
  }

  /** First chunk whose last entry satisfies `atOrAfter`; chunks.length when none. */
  private chunkWith(atOrAfter: (e: IndexEntry) => boolean): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid] as IndexEntry[];
      if (atOrAfter(chunk[chunk.length - 1] as IndexEntry)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** True when entry e sorts before (score, member). */
function precedes(e: IndexEntry, score: number, member: string): boolean {
  return e.score < score || (e.score === score && compareMembers(e.member, member) < 0);
}

/** First position in a sorted array whose entry satisfies `atOrAfter`. */
function search(entries: readonly IndexEntry[], atOrAfter: (e: IndexEntry) => boolean): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (atOrAfter(entries[mid] as IndexEntry)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Redis orders equal scores by member bytes (UTF-8), which is code point order. Plain `<`
 * compares UTF-16 units and differs only where a surrogate (a code point above U+FFFF) meets a
 * unit in U+E000–U+FFFF, so those units are re-ranked instead of encoding every member.
 */
export function compareMembers(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

function rank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}
