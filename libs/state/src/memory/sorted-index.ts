import type { IndexEntry } from '../state-store.js';

/**
 * The memory backend's sorted set: a member → score map plus one array kept in Redis's ZSET
 * order (score, then member bytes). Range reads binary-search the array, so they cost
 * O(log n + page) and never copy or sort the whole index; writes cost one splice.
 */
export class SortedIndex {
  private readonly scores = new Map<string, number>();
  private readonly entries: IndexEntry[] = [];

  get size(): number {
    return this.entries.length;
  }

  /** ZADD: adds or moves the member. */
  add(member: string, score: number): void {
    const old = this.scores.get(member);
    if (old === score) return;
    if (old !== undefined) this.entries.splice(this.position(old, member), 1);
    this.scores.set(member, score);
    this.entries.splice(this.position(score, member), 0, { member, score });
  }

  /** ZREM */
  remove(member: string): boolean {
    const score = this.scores.get(member);
    if (score === undefined) return false;
    this.scores.delete(member);
    this.entries.splice(this.position(score, member), 1);
    return true;
  }

  /** ZRANGE BYSCORE [REV] LIMIT: entries in [min, max], `offset` skipped, at most `limit`. */
  range(min: number, max: number, rev: boolean, offset: number, limit: number): IndexEntry[] {
    const [from, to] = this.bounds(min, max);
    // rev pages from the top of [from, to) downwards.
    const start = rev ? Math.max(from, to - offset - limit) : from + offset;
    const end = rev ? to - offset : Math.min(to, from + offset + limit);
    if (start >= end) return [];
    const page = this.entries.slice(start, end).map((e) => ({ ...e }));
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
    for (const { member } of this.entries.splice(from, to - from)) this.scores.delete(member);
    return to - from;
  }

  /** Removes and returns up to `limit` entries with score <= maxScore, lowest first. */
  popDue(maxScore: number, limit: number): IndexEntry[] {
    const due = Math.min(limit, this.search((e) => e.score > maxScore));
    const popped = this.entries.splice(0, due);
    for (const { member } of popped) this.scores.delete(member);
    return popped;
  }

  /** [from, to): the positions of scores in [min, max]; to <= from when there are none. */
  private bounds(min: number, max: number): [number, number] {
    return [this.search((e) => e.score >= min), this.search((e) => e.score > max)];
  }

  /** Where (score, member) is, or would be inserted. */
  private position(score: number, member: string): number {
    return this.search((e) => e.score > score || (e.score === score && compareMembers(e.member, member) >= 0));
  }

  /** First position whose entry satisfies `atOrAfter`, which must be monotone over the order. */
  private search(atOrAfter: (e: IndexEntry) => boolean): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (atOrAfter(this.entries[mid] as IndexEntry)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
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
