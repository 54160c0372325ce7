import type { Counter } from 'prom-client';

/**
 * A counter labelled by something that can be deleted (a rule, a quota policy): before a new
 * label set gets its series, the series of owners no longer live are removed, so owners created
 * and deleted over months do not leave a series each for good. The series then number at most
 * the live owners' plus one. A removed owner's count is gone from the scrape (Prometheus sees
 * the series end), which is what a deleted thing should show.
 */
export class OwnedSeries<L extends string> {
  private readonly seen = new Map<string, Partial<Record<L, string>>>();

  constructor(
    private readonly counter: Counter<L>,
    private readonly ownerOf: (labels: Partial<Record<L, string>>) => string,
    private readonly isLive: (owner: string) => boolean,
  ) {}

  inc(labels: Partial<Record<L, string>>): void {
    const key = JSON.stringify(labels);
    if (!this.seen.has(key)) {
      this.prune();
      this.seen.set(key, labels);
    }
    this.counter.inc(labels);
  }

  private prune(): void {
    for (const [key, labels] of this.seen) {
      if (this.isLive(this.ownerOf(labels))) continue;
      this.counter.remove(labels);
      this.seen.delete(key);
    }
  }
}
