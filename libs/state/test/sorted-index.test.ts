import { describe, expect, it } from 'vitest';
import { compareMembers, SortedIndex } from '../src/memory/sorted-index.js';
import type { IndexEntry } from '../src/state-store.js';

/** Deterministic PRNG (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The obvious implementation: sort a copy on every read, ties by UTF-8 bytes like Redis. */
class NaiveIndex {
  readonly members = new Map<string, number>();
  sorted(): IndexEntry[] {
    return [...this.members]
      .map(([member, score]) => ({ member, score }))
      .sort((a, b) => a.score - b.score || Buffer.compare(Buffer.from(a.member), Buffer.from(b.member)));
  }
  within(min: number, max: number): IndexEntry[] {
    return this.sorted().filter((e) => e.score >= min && e.score <= max);
  }
}

const MEMBERS = ['a', 'b', 'B', 'ab', 'a\u0000', 'ä', '～', '🚀', '😀', '\uffff', '', 'zz', 'm1', 'm10', 'm2'];
const SCORES = [-Infinity, -1, 0, 0.5, 1, 1, 2, 3, Infinity];

describe('SortedIndex (memory sorted set)', () => {
  it('orders members by UTF-8 bytes', () => {
    const words = [...MEMBERS, '\ue000', '\ud7ff', '𐀀'];
    const bytes = [...words].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...words].sort(compareMembers)).toEqual(bytes);
  });

  // Chunks of 1-2 entries make every operation cross chunk boundaries, split and drop chunks; the
  // member lookup is built from the first member, part-way through, or never (scans only).
  it.each([
    [512, 16],
    [1, 0],
    [2, 6],
    [1, 1000],
  ])('agrees with a sort-on-read model over random operations (chunk size %i, lookup above %i members)', (chunkSize, lookupFrom) => {
    const rnd = random(42);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const bound = () => (rnd() < 0.2 ? undefined : pick(SCORES));
    const index = new SortedIndex(chunkSize, lookupFrom);
    const model = new NaiveIndex();
    for (let step = 0; step < 5000; step++) {
      const roll = rnd();
      if (roll < 0.45) {
        const [member, score] = [pick(MEMBERS), pick(SCORES)];
        index.add(member, score);
        model.members.set(member, score);
      } else if (roll < 0.55) {
        const member = pick(MEMBERS);
        expect(index.remove(member)).toBe(model.members.delete(member));
      } else if (roll < 0.8) {
        const [min, max] = [bound() ?? -Infinity, bound() ?? Infinity];
        const [rev, offset, limit] = [rnd() < 0.5, Math.floor(rnd() * 6), Math.floor(rnd() * 6)];
        const all = model.within(min, max);
        const expected = (rev ? all.reverse() : all).slice(offset, offset + limit);
        expect(index.range(min, max, rev, offset, limit), `step ${step}`).toEqual(expected);
        expect(index.count(min, max)).toBe(model.within(min, max).length);
      } else if (roll < 0.9) {
        const [min, max] = [pick(SCORES), pick(SCORES)];
        const removed = model.within(min, max);
        for (const { member } of removed) model.members.delete(member);
        expect(index.removeRange(min, max)).toBe(removed.length);
      } else {
        const [maxScore, limit] = [pick(SCORES), Math.floor(rnd() * 4)];
        const due = model.within(-Infinity, maxScore).slice(0, limit);
        for (const { member } of due) model.members.delete(member);
        expect(index.popDue(maxScore, limit)).toEqual(due);
      }
      expect(index.size).toBe(model.members.size);
    }
    expect(index.range(-Infinity, Infinity, false, 0, 100)).toEqual(model.sorted());
  });

  it('reads pages and counts correctly on a large index', () => {
    const index = new SortedIndex();
    const n = 100_000;
    for (let i = 0; i < n; i++) index.add(`m${i}`, i);
    let found = 0;
    for (let i = 0; i < 10_000; i++) {
      const min = (i * 7919) % n;
      found += index.range(min, Infinity, i % 2 === 0, 0, 1).length + index.count(min, min + 9);
    }
    expect(found).toBe(10_000 * 11); // one entry per range, ten per count (every min here is below n - 9)
    expect(index.range(n - 3, Infinity, true, 0, 5).map((e) => e.member)).toEqual([`m${n - 1}`, `m${n - 2}`, `m${n - 3}`]);
  });

  it('stays consistent through splits and front removals at scale (eviction of the oldest)', () => {
    const index = new SortedIndex(8);
    for (let i = 0; i < 1000; i++) index.add(`m${String(i).padStart(4, '0')}`, i % 100);
    // Remove from the front, as eviction does, while adding at the back.
    for (let i = 0; i < 500; i++) {
      const [oldest] = index.range(-Infinity, Infinity, false, 0, 1);
      expect(oldest && index.remove(oldest.member)).toBe(true);
      index.add(`n${i}`, 1000 + i);
    }
    expect(index.size).toBe(1000);
    const all = index.range(-Infinity, Infinity, false, 0, 2000);
    expect(all.map((e) => e.score)).toEqual([...all.map((e) => e.score)].sort((a, b) => a - b));
    expect(index.count(1000, Infinity)).toBe(500);
    expect(index.removeRange(-Infinity, 999)).toBe(500);
    expect(index.popDue(1009, 3).map((e) => e.member)).toEqual(['n0', 'n1', 'n2']);
    expect(index.removeRange(1003, 1009)).toBe(7);
    expect(index.size).toBe(490);
    expect(index.range(-Infinity, Infinity, false, 0, 2).map((e) => e.member)).toEqual(['n10', 'n11']);
  });

  // Timestamps near each other (held as small offsets), then one far away or fractional (the
  // lookup switches to the scores themselves); adds promising fixed scores (no lookup, entries found
  // by score) until one that does not (the lookup is built); removals with right, wrong and no hints.
  it.each([
    [512, 16],
    [2, 3],
  ])('agrees with the model with fixed-score adds, far and fractional scores (chunk size %i, lookup above %i)', (chunkSize, lookupFrom) => {
    const rnd = random(7);
    const NOW = Date.UTC(2026, 10, 26);
    const members = Array.from({ length: 40 }, (_, i) => `r${i}`);
    const fixedScore = new Map(members.map((m, i) => [m, NOW + i * 1000] as const));
    const index = new SortedIndex(chunkSize, lookupFrom);
    const model = new NaiveIndex();
    const check = (step: number) => {
      expect(index.range(-Infinity, Infinity, false, 0, 1000), `step ${step}`).toEqual(model.sorted());
      for (const m of members) expect(index.score(m)).toBe(model.members.get(m));
    };
    for (let step = 0; step < 3000; step++) {
      const member = members[Math.floor(rnd() * members.length)] as string;
      const roll = rnd();
      if (step < 1500 && roll < 0.5) {
        // Phase one: every add promises its member's one score.
        const score = fixedScore.get(member) as number;
        index.add(member, score, true);
        model.members.set(member, score);
      } else if (roll < 0.5) {
        const score = roll < 0.05 ? NOW + 40 * 86_400_000 : roll < 0.1 ? 0.1 : NOW + Math.floor(rnd() * 100_000);
        index.add(member, score);
        model.members.set(member, score);
      } else {
        const known = model.members.get(member);
        const hint = roll < 0.7 ? known : roll < 0.85 ? (known ?? NOW) + 1 : undefined;
        expect(index.remove(member, hint)).toBe(model.members.delete(member));
      }
      if (step % 50 === 0) check(step);
    }
    check(3000);
  });

  it('hands out copies, so callers cannot reorder the index', () => {
    const index = new SortedIndex();
    index.add('a', 1);
    const [entry] = index.range(-Infinity, Infinity, false, 0, 1);
    if (entry !== undefined) entry.score = 99;
    expect(index.range(-Infinity, Infinity, false, 0, 1)).toEqual([{ member: 'a', score: 1 }]);
  });
});
