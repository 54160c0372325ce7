import type { Clock } from '@sluice/core';
import type { IndexEntry, StateKey, StateStore } from '../state-store.js';
import type { RecordRef } from './record-keys.js';

/** The record a member of one index stands for; null when the member does not parse (then only its age counts). */
export type HolderOf = (member: string) => RecordRef | null;

/** Any member count: a bounded add that is never full, but still reports 'present'. */
export const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** One index entry this call added, to give back if the create does not complete. */
export interface Claim {
  index: StateKey;
  member: string;
}

export interface ClaimDeps {
  state: StateStore;
  clock: Clock;
  /** A claim older than this whose record is not live was left by a create or delete that died half-way. */
  staleMs: number;
  /** True when the record exists and is not deleted. */
  isLive(ref: RecordRef): Promise<boolean>;
}

/**
 * Claims are the members of small indexes that a record holds while it lives: its id in a
 * one-member locator, a unique name in a one-member index, its id in its scope's (possibly
 * bounded) index. Each is taken by one atomic bounded add, so however many replicas race, one
 * wins. A create that dies half-way leaves claims behind; the next claimant that finds one
 * older than staleMs whose record is not live evicts it, so nothing stays blocked for good.
 */
export class Claims {
  private lastScore = 0;

  constructor(private readonly deps: ClaimDeps) {}

  /**
   * The score of a new claim: the clock's ms, made strictly increasing within this process by a
   * thousandth of a ms where the clock has not moved, so creates listed "in creation order"
   * keep their order here (across processes, creates within one ms have no order to keep).
   */
  nextScore(): number {
    this.lastScore = Math.max(this.deps.clock.now(), this.lastScore + 0.001);
    return this.lastScore;
  }

  /** Takes a one-member index; false when a live record, or a create still in flight, holds it. */
  async takeOne(index: StateKey, member: string, holderOf: HolderOf, taken: Claim[]): Promise<boolean> {
    for (let round = 0; round < 2; round++) {
      if ((await this.deps.state.indexAddBounded(index, member, this.nextScore(), 1)) === 'added') {
        taken.push({ index, member });
        return true;
      }
      const [holder] = await this.deps.state.indexRange(index, { limit: 1 });
      if (holder && !(await this.isLeftover(holder, holderOf))) return false;
      if (holder) await this.deps.state.indexRemove(index, holder.member);
    }
    return false;
  }

  /**
   * Puts `member` into an index of at most `max` members. 'present' (another call's claim, or a
   * leftover) is not this call's to give back. A full index is cleared of leftovers once.
   */
  async takeIn(index: StateKey, member: string, max: number, holderOf: HolderOf, taken: Claim[]): Promise<'added' | 'present' | 'full'> {
    let result = await this.deps.state.indexAddBounded(index, member, this.nextScore(), max);
    if (result === 'full') {
      await this.evictLeftovers(index, max, holderOf);
      result = await this.deps.state.indexAddBounded(index, member, this.nextScore(), max);
    }
    if (result === 'added') taken.push({ index, member });
    return result;
  }

  async release(claims: readonly Claim[]): Promise<void> {
    for (const claim of [...claims].reverse()) await this.deps.state.indexRemove(claim.index, claim.member);
  }

  /** An entry whose claim is old and whose record is not live. */
  async isLeftover(entry: IndexEntry, holderOf: HolderOf): Promise<boolean> {
    if (entry.score >= this.deps.clock.now() - this.deps.staleMs) return false;
    const ref = holderOf(entry.member);
    return ref === null || !(await this.deps.isLive(ref));
  }

  private async evictLeftovers(index: StateKey, max: number, holderOf: HolderOf): Promise<void> {
    const old = await this.deps.state.indexRange(index, { max: this.deps.clock.now() - this.deps.staleMs, limit: max });
    const leftover = await Promise.all(old.map((entry) => this.isLeftover(entry, holderOf)));
    await Promise.all(old.filter((_, i) => leftover[i]).map((entry) => this.deps.state.indexRemove(index, entry.member)));
  }
}
