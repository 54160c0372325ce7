import type { CasResult, IndexEntry, StateStore } from '@sluice/state';
import { eventIndexKey, eventKey } from './event-keys.js';
import { enteredAtMs, parseEventRecord, type EventRecord, type StoredEvent } from './event-record.js';

export interface EventListFilter {
  status?: string | undefined;
  limit: number;
}

/** Index entries read per round trip while listing. */
const LIST_PAGE = 200;

/** Event records in the StateStore: versioned reads, compare-and-swap writes, the per-tenant index. */
export class EventStore {
  constructor(private readonly state: StateStore) {}

  async get(namespace: string, tenant: string, fingerprint: string): Promise<StoredEvent | null> {
    const found = await this.state.getVersioned(eventKey(namespace, tenant, fingerprint));
    return found ? { record: parseEventRecord(found.value), version: found.version } : null;
  }

  /** Writes the record when the stored version is still `expectedVersion` (0 = absent), moving its index entry in the same step. */
  write(expectedVersion: number, record: EventRecord): Promise<CasResult> {
    const { namespace, tenant, fingerprint } = record;
    return this.state.compareAndSwapWith(eventKey(namespace, tenant, fingerprint), expectedVersion, JSON.stringify(record), [
      { op: 'indexAdd', index: eventIndexKey(namespace, tenant), member: fingerprint, score: enteredAtMs(record) },
    ]);
  }

  /** The tenant's events, most recently changed first; with `status`, only those in that state. */
  async list(namespace: string, tenant: string, filter: EventListFilter): Promise<StoredEvent[]> {
    const found: StoredEvent[] = [];
    const index = eventIndexKey(namespace, tenant);
    for (let offset = 0; found.length < filter.limit; offset += LIST_PAGE) {
      const entries = await this.state.indexRange(index, { rev: true, offset, limit: LIST_PAGE });
      const events = await Promise.all(entries.map((e) => this.get(namespace, tenant, e.member)));
      for (const event of events) {
        // An entry may outlive its record for a moment (a retention delete in progress).
        if (event && (filter.status === undefined || event.record.state === filter.status)) found.push(event);
        if (found.length === filter.limit) break;
      }
      if (entries.length < LIST_PAGE) break;
    }
    return found;
  }

  /** Index entries (fingerprint and the instant it entered its state) at or before `maxEnteredMs`, oldest first. */
  enteredBefore(namespace: string, tenant: string, maxEnteredMs: number, offset: number, limit: number): Promise<IndexEntry[]> {
    return this.state.indexRange(eventIndexKey(namespace, tenant), { max: maxEnteredMs, offset, limit });
  }

  /**
   * Removes an index entry while it is still the one read: an event created again since (a later
   * instant) keeps its own. Retention's deletes end with it, and it drops an entry a delete
   * interrupted between its two steps left without a record.
   */
  async dropIndexEntry(namespace: string, tenant: string, entry: IndexEntry): Promise<void> {
    await this.state.indexRemoveIf(eventIndexKey(namespace, tenant), entry.member, entry.score);
  }

  /** Removes an event, then its index entry as read (retention: only events nothing can move any more). */
  async delete(namespace: string, tenant: string, entry: IndexEntry): Promise<boolean> {
    const deleted = await this.state.delete(eventKey(namespace, tenant, entry.member));
    await this.dropIndexEntry(namespace, tenant, entry);
    return deleted;
  }
}
