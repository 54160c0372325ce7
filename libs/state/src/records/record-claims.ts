import type { Clock } from '@sluice/core';
import type { IndexEntry, StateKey, StateStore } from '../state-store.js';
import type { RecordRef } from './record-keys.js';

/** The record a member of one index stands for; null when the member does not parse (then only its age counts). */
export type HolderOf = (member: string) => RecordRef | null;

/** Any member count: a bounded add that is never full, but still reports 'present'. */
export const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** One index entry a create took, with the score that makes it this create's and no other's. */
export interface Claim {
  index: StateKey;
  member: string;
  score: number;
}

export interface ClaimDeps {
  state: StateStore;
  clock: Clock;
  /** A claim older than this whose record is not live was left by a create or delete that died half-way. */
  staleMs: number;
  /**
   * Lets go of a record that is not live: fences it off (a compare-and-swap to a tombstone at the
   * version seen) so that a create still holding that version can never land. False when the
   * record is live, or when it changed meanwhile.
   */
  letGo(ref: RecordRef): Promise<boolean>;
}

/**
 * Claims are the members of small indexes that a record holds while it lives: its id in a
 * one-member index, a unique name in a one-member index, its id in its scope's (possibly
 * bounded) index and in the listing of every record. Each is taken by one atomic bounded add,
 * so however many replicas race, one wins. A create that dies half-way leaves claims behind;
 * the next claimant that finds one older than staleMs evicts it, after fencing its record off,
 * so nothing stays blocked for good and a creator presumed dead can never complete late.
 * Claims are given back by score, so a call never removes a claim someone took after it.
 */
export class Claims {
  private lastScore = 0;

  constructor(private readonly deps: ClaimDeps) {}

  /**
   * The score of a new claim: the clock's ms, made strictly increasing for this repository by a
   * thousandth of a ms where the clock has not moved, so that two claims of one repository never
   * share a score and its creates list in the order they were made.
   */
  nextScore(): number {
    this.lastScore = Math.max(this.deps.clock.now(), this.lastScore + 0.001);
    return this.lastScore;
  }

  /**
   * Takes a one-member index for the record `self`; null when a live record, or a create or
   * delete still in flight, holds it. Once the caller holds `self`'s id claim, a holder naming
   * `self` can only be a leftover of that very record: it is taken over without fencing.
   */
  async takeOne(index: StateKey, member: string, holderOf: HolderOf, self?: RecordRef): Promise<Claim | null> {
    for (let round = 0; round < 2; round++) {
      const score = this.nextScore();
      if ((await this.deps.state.indexAddBounded(index, member, score, 1)) === 'added') return { index, member, score };
      const [holder] = await this.deps.state.indexRange(index, { limit: 1 });
      if (!holder) continue;
      if (self && sameRef(holderOf(holder.member), self)) await this.deps.state.indexRemoveIf(index, holder.member, holder.score);
      else if (!(await this.evict(index, holder, holderOf))) return null;
    }
    return null;
  }

  /**
   * Puts `member` into an index of at most `max` members (a full one is cleared of leftovers
   * once). The caller holds the record's exclusive id claim, so a member already there is a
   * leftover of this very record: it is taken over with a fresh score.
   */
  async takeIn(index: StateKey, member: string, max: number, holderOf: HolderOf): Promise<Claim | 'full'> {
    let score = this.nextScore();
    let result = await this.deps.state.indexAddBounded(index, member, score, max);
    if (result === 'full') {
      await this.evictLeftovers(index, max, holderOf);
      score = this.nextScore();
      result = await this.deps.state.indexAddBounded(index, member, score, max);
    }
    if (result === 'full') return 'full';
    if (result === 'present') await this.deps.state.indexAdd(index, member, score);
    return { index, member, score };
  }

  /** Gives claims back, each only while it still has the score it was taken with. */
  async release(claims: readonly Claim[]): Promise<void> {
    for (const claim of [...claims].reverse()) await this.deps.state.indexRemoveIf(claim.index, claim.member, claim.score);
  }

  /** Removes an old entry whose record is not live, after fencing that record off; true when the entry no longer blocks. */
  async evict(index: StateKey, entry: IndexEntry, holderOf: HolderOf): Promise<boolean> {
    if (!(await this.isLeftover(entry, holderOf))) return false;
    await this.deps.state.indexRemoveIf(index, entry.member, entry.score);
    return true;
  }

  /** An entry old enough to be a dead process's, whose record lets go of it (fenced off, or unparseable). */
  async isLeftover(entry: IndexEntry, holderOf: HolderOf): Promise<boolean> {
    if (entry.score >= this.deps.clock.now() - this.deps.staleMs) return false;
    const ref = holderOf(entry.member);
    return ref === null || (await this.deps.letGo(ref));
  }

  private async evictLeftovers(index: StateKey, max: number, holderOf: HolderOf): Promise<void> {
    const old = await this.deps.state.indexRange(index, { max: this.deps.clock.now() - this.deps.staleMs, limit: max });
    for (const entry of old) await this.evict(index, entry, holderOf);
  }
}

function sameRef(a: RecordRef | null, b: RecordRef): boolean {
  return a !== null && a.id === b.id && a.namespace === b.namespace && a.tenant === b.tenant;
}
