import type { IndexEntry } from '../state-store.js';
import { flatten } from './flat-string.js';

/** Entries in ZSET order, as parallel arrays: no object per entry, and scores held unboxed. */
interface Chunk {
  members: string[];
  scores: number[];
}

/** Holds for every position from some point on (a monotone predicate over the order). */
type AtOrAfter = (score: number, member: string) => boolean;

/** Offsets within ±SMALL_INT are small integers V8 holds unboxed (31-bit "Smis" on every build). */
const SMALL_INT = 2 ** 30 - 1;

/**
 * The memory backend's sorted set: its entries in Redis's ZSET order (score, then member bytes),
 * held in chunks of at most 2 × chunkSize, and a member → score map once there are more than
 * `lookupFrom` members (below that, a scan of the few entries finds a member: the audit trail
 * keeps one small set per action id, and a Map each would cost more than the set's data) —
 * unless every add promised a fixed score (the audit's indexes), which lets removals find an
 * entry by its score instead: the map was ~37 bytes per member, 13 members per audit record.
 * A write splices one chunk, so it stays cheap at any size (one array of 100 000 entries took
 * ~200 µs per splice at its front, which the audit store's eviction does on every append once
 * at its cap). Reads binary-search the chunks' last entries, then one chunk:
 * O(log n + n / chunkSize + page). Entries are not objects, so a large index is a few arrays
 * for the garbage collector to mark, not a million small objects.
 */
export class SortedIndex {
  /**
   * member → score, as an offset from `base` while every score is an integer within SMALL_INT of
   * it (timestamps within ±12 days: the audit indexes), so V8 keeps the map's values unboxed: a
   * boxed double per member was 16 bytes of heap, 13 per audit record. base null: the scores.
   */
  private lookup: Map<string, number> | null = null;
  private base: number | null = null;
  /** Some add did not promise a fixed score: members may move, and the lookup finds them. */
  private movable = false;
  private chunks: Chunk[] = [];
  private total = 0;

  /** Chunks split above 2 × chunkSize entries; small values are for tests. */
  constructor(
    private readonly chunkSize = 512,
    private readonly lookupFrom = 16,
  ) {}

  get size(): number {
    return this.total;
  }

  /** ZSCORE is not nil */
  has(member: string): boolean {
    return this.score(member) !== undefined;
  }

  /** ZSCORE */
  score(member: string): number | undefined {
    if (this.lookup !== null) {
      const held = this.lookup.get(member);
      return held === undefined || this.base === null ? held : held + this.base;
    }
    for (const chunk of this.chunks) {
      const at = chunk.members.indexOf(member);
      if (at >= 0) return chunk.scores[at];
    }
    return undefined;
  }

  /**
   * ZADD: adds or moves the member. While every add says `fixedScore` (the member is never given
   * another score), no lookup is built: an add that finds the same entry changes nothing, and
   * removals find entries by score (remove's hint). The first add without it builds the lookup.
   */
  add(member: string, score: number, fixedScore = false): void {
    if (fixedScore && !this.movable) {
      this.insert(member, score, true);
      return;
    }
    if (!this.movable) {
      this.movable = true;
      if (this.total > this.lookupFrom) this.buildLookup();
    }
    const old = this.score(member);
    if (old === score) return;
    if (old !== undefined) this.removeAt(old, member);
    this.insert(member, score);
    if (this.lookup !== null) this.remember(member, score);
    else if (this.total > this.lookupFrom) this.buildLookup();
  }

  /** ZREM; `hint`: the member's score if the caller knows it (spares a scan when there is no lookup). */
  remove(member: string, hint?: number): boolean {
    if (this.lookup === null && hint !== undefined && this.removeAt(hint, member)) return true;
    const score = this.score(member);
    if (score === undefined) return false;
    this.lookup?.delete(member);
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
    const page = this.slice(start, end, false);
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
    const removed = this.slice(from, to, true);
    if (this.lookup !== null) for (const { member } of removed) this.lookup.delete(member);
    return removed.length;
  }

  /** Removes and returns up to `limit` entries with score <= maxScore, lowest first. */
  popDue(maxScore: number, limit: number): IndexEntry[] {
    const due = Math.min(
      limit,
      this.rank((score) => score > maxScore),
    );
    if (due <= 0) return [];
    const popped = this.slice(0, due, true);
    if (this.lookup !== null) for (const { member } of popped) this.lookup.delete(member);
    return popped;
  }

  /** Builds the lookup from the entries, as offsets from the first score when they all allow it. */
  private buildLookup(): void {
    const first = this.chunks[0]?.scores[0];
    this.base = first !== undefined && Number.isSafeInteger(first) ? first : null;
    this.lookup = new Map();
    for (const { members, scores } of this.chunks) for (let i = 0; i < members.length; i++) this.remember(members[i] as string, scores[i] as number);
  }

  private remember(member: string, score: number): void {
    const lookup = this.lookup as Map<string, number>;
    if (this.base === null) {
      lookup.set(member, score);
      return;
    }
    const offset = score - this.base;
    if (Number.isSafeInteger(score) && offset >= -SMALL_INT && offset <= SMALL_INT) {
      lookup.set(member, offset);
      return;
    }
    // A score far from the base (or not an integer): hold the scores themselves from now on.
    const base = this.base;
    this.base = null;
    for (const [m, held] of lookup) lookup.set(m, held + base);
    lookup.set(member, score);
  }

  /** Inserts the entry; with `unlessPresent`, an entry (score, member) already there is left as the only one. */
  private insert(member: string, score: number, unlessPresent = false): void {
    flatten(member);
    const lastChunk = this.chunks.length - 1;
    const last = this.chunks[lastChunk];
    if (last === undefined) {
      // Empty: a new array of one (push would reserve 17 slots; most sets of the audit's action pointers keep one member).
      this.chunks = [{ members: [member], scores: [score] }];
      this.total++;
      return;
    }
    const end = last.members.length;
    let c = lastChunk;
    let at = end;
    // The audit's time indexes add their newest entry, after every other: no search.
    if (!precedes(last.scores[end - 1] as number, last.members[end - 1] as string, score, member)) {
      const atOrAfter: AtOrAfter = (s, m) => !precedes(s, m, score, member);
      c = Math.min(this.chunkWith(atOrAfter), lastChunk);
      at = search(this.chunks[c] as Chunk, atOrAfter);
    }
    const chunk = this.chunks[c] as Chunk;
    if (unlessPresent && chunk.members[at] === member && chunk.scores[at] === score) return;
    insertInto(chunk.members, at, member);
    insertInto(chunk.scores, at, score);
    if (chunk.members.length > 2 * this.chunkSize) {
      this.chunks.splice(c + 1, 0, { members: chunk.members.splice(this.chunkSize), scores: chunk.scores.splice(this.chunkSize) });
    }
    this.total++;
  }

  /** Removes the entry (score, member); false when there is no such entry. */
  private removeAt(score: number, member: string): boolean {
    let c = 0;
    let at = 0;
    const first = this.chunks[0];
    // Eviction and expiry remove the oldest entry, first of all: no search.
    if (first === undefined || first.scores[0] !== score || first.members[0] !== member) {
      const atOrAfter: AtOrAfter = (s, m) => !precedes(s, m, score, member);
      c = this.chunkWith(atOrAfter);
      const found = this.chunks[c];
      if (found === undefined) return false;
      at = search(found, atOrAfter);
    }
    const chunk = this.chunks[c] as Chunk;
    if (chunk.members[at] !== member || chunk.scores[at] !== score) return false;
    removeFrom(chunk.members, at);
    removeFrom(chunk.scores, at);
    if (chunk.members.length === 0) this.chunks.splice(c, 1);
    this.total--;
    return true;
  }

  /** Entries at positions [start, end), removed from the index when `take` (the lookup is the caller's to update). */
  private slice(start: number, end: number, take: boolean): IndexEntry[] {
    const out: IndexEntry[] = [];
    let offset = 0;
    for (let c = 0; c < this.chunks.length && offset < end; ) {
      const chunk = this.chunks[c] as Chunk;
      const length = chunk.members.length;
      const from = Math.max(0, start - offset);
      const to = Math.min(length, end - offset);
      offset += length;
      if (from < to) {
        for (let i = from; i < to; i++) out.push({ member: chunk.members[i] as string, score: chunk.scores[i] as number });
        if (take) {
          chunk.members.splice(from, to - from);
          chunk.scores.splice(from, to - from);
          this.total -= to - from;
          offset -= to - from;
          end -= to - from;
          if (chunk.members.length === 0) {
            this.chunks.splice(c, 1);
            continue;
          }
        }
      }
      c++;
    }
    return out;
  }

  /** [from, to): the positions of scores in [min, max]; to <= from when there are none. */
  private bounds(min: number, max: number): [number, number] {
    return [this.rank((score) => score >= min), this.rank((score) => score > max)];
  }

  /** Position of the first entry satisfying `atOrAfter`; size when none. */
  private rank(atOrAfter: AtOrAfter): number {
    const c = this.chunkWith(atOrAfter);
    let position = 0;
    for (let i = 0; i < c; i++) position += (this.chunks[i] as Chunk).members.length;
    const chunk = this.chunks[c];
    return chunk === undefined ? position : position + search(chunk, atOrAfter);
  }

  /** First chunk whose last entry satisfies `atOrAfter`; chunks.length when none. */
  private chunkWith(atOrAfter: AtOrAfter): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const { members, scores } = this.chunks[mid] as Chunk;
      const last = members.length - 1;
      if (atOrAfter(scores[last] as number, members[last] as string)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/*
 * splice returns an array of what it removed, even of nothing: one allocation per write, ~4 % of
 * what a dispatch allocated in one process. The audit's indexes add at the end (newest) and evict
 * at the front (oldest), where push and shift allocate nothing (V8 trims an array's front in place).
 */
function insertInto<T>(array: T[], at: number, value: T): void {
  if (at === array.length) array.push(value);
  else array.splice(at, 0, value);
}

function removeFrom<T>(array: T[], at: number): void {
  if (at === 0) array.shift();
  else if (at === array.length - 1) array.pop();
  else array.splice(at, 1);
}

/** True when the entry (s, m) sorts before (score, member). */
function precedes(s: number, m: string, score: number, member: string): boolean {
  return s < score || (s === score && compareMembers(m, member) < 0);
}

/** First position in a chunk whose entry satisfies `atOrAfter`. */
function search({ members, scores }: Chunk, atOrAfter: AtOrAfter): number {
  let lo = 0;
  let hi = members.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (atOrAfter(scores[mid] as number, members[mid] as string)) hi = mid;
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
