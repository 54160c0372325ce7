import type { IndexEntry } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { NOTHING_REAPED, type ReapContext, type ReapResult, type RetentionSource } from '../retention/retention-source.js';
import type { EventStore } from './event-store.js';
import type { StateMachineRegistry } from './state-machine.js';

const PAGE = 500;
/** Index entries looked at per tenant per cycle at most; the next cycle goes on from there. */
const MAX_SCANNED = 50_000;

/**
 * Retention of resolved events: an event that has rested in a terminal state of its configured
 * machine (no transition leaves it, no timeout fires in it) for event_ttl_seconds is deleted.
 * Nothing can move such an event, so the delete races no transition; an event whose machine is
 * no longer configured is kept, as it may be again.
 */
export class EventRetention implements RetentionSource {
  readonly name = 'events';
  /**
   * Per pair, how many kept entries the last cycle left behind it when its budget ran out: the
   * next cycle starts there, so events that stay (open ones, older than every resolved one) do
   * not use up every cycle's budget before it reaches the resolved ones behind them.
   */
  private readonly resumeAt = new Map<string, number>();
  private readonly maxScanned: number;

  constructor(
    private readonly store: EventStore,
    private readonly machines: StateMachineRegistry,
    private readonly log: Logger,
    opts: { maxScanned?: number } = {},
  ) {
    this.maxScanned = opts.maxScanned ?? MAX_SCANNED;
  }

  async reap({ policy, nowMs }: ReapContext): Promise<ReapResult> {
    if (policy.event_ttl_seconds === undefined) return NOTHING_REAPED;
    const { namespace, tenant } = policy;
    const pair = `${namespace}\u0000${tenant}`;
    const cutoff = nowMs - policy.event_ttl_seconds * 1000;
    let deleted = 0;
    let errors = 0;
    // Deleted entries leave the index, so the offset only counts the entries kept.
    let kept = this.resumeAt.get(pair) ?? 0;
    this.resumeAt.delete(pair);
    for (let scanned = 0; ; ) {
      if (scanned >= this.maxScanned) {
        this.resumeAt.set(pair, kept);
        break;
      }
      const limit = Math.min(PAGE, this.maxScanned - scanned);
      const page = await this.store.enteredBefore(namespace, tenant, cutoff, kept, limit);
      scanned += page.length;
      for (const entry of page) {
        try {
          const result = await this.reapOne(namespace, tenant, entry, cutoff);
          if (result === 'deleted') deleted += 1;
          if (result === 'kept') kept += 1;
        } catch (err) {
          errors += 1;
          kept += 1;
          this.log.warn({ err, namespace, tenant, fingerprint: entry.member }, 'event retention failed for one event');
        }
      }
      if (page.length < limit) break; // the end: the next cycle starts from the oldest again
    }
    return { ...NOTHING_REAPED, deleted, errors };
  }

  /** `dropped`: an index entry without its record (a crash mid-delete), removed and not counted. */
  private async reapOne(namespace: string, tenant: string, entry: IndexEntry, cutoff: number): Promise<'deleted' | 'kept' | 'dropped'> {
    const stored = await this.store.get(namespace, tenant, entry.member);
    if (!stored) {
      await this.store.dropIndexEntry(namespace, tenant, entry);
      return 'dropped';
    }
    const { record } = stored;
    const machine = this.machines.get(record.state_machine);
    if (!machine?.isTerminal(record.state) || Date.parse(record.updated_at) > cutoff) return 'kept';
    await this.store.delete(namespace, tenant, entry);
    return 'deleted';
  }
}
