import { RecurringAction, errors, type Clock } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import type { RecurringScope } from './recurring-input.js';
import { DIRECTORY_KIND, directoryKey, recordKey, rosterKey } from './recurring-keys.js';

export interface StoredRecurring {
  record: RecurringAction;
  version: number;
}

interface RosterEntry {
  id: string;
  /** When the slot was reserved (epoch ms): a reservation without a record past STALE_MS is a crashed create. */
  at: number;
}

const MAX_ATTEMPTS = 8;
const STALE_MS = 60_000;

/**
 * Recurring actions in the StateStore. A record is a versioned value written only by
 * compare-and-swap, so an edit, a pause and an occurrence racing on two processes serialize.
 * A per-pair roster (also CAS) holds the ids: reserving a slot in it before the record exists
 * makes the per-tenant maximum exact however many replicas create at once.
 */
export class RecurringRecords {
  constructor(
    private readonly state: StateStore,
    private readonly clock: Clock,
  ) {}

  async read(scope: RecurringScope, id: string): Promise<StoredRecurring | null> {
    const stored = await this.state.getVersioned(recordKey(scope.namespace, scope.tenant, id));
    const record = stored ? decode(stored.value) : null;
    return stored && record ? { record, version: stored.version } : null;
  }

  /** 409 when the pair already holds `max` recurring actions. */
  async create(record: RecurringAction, max: number): Promise<void> {
    const scope = { namespace: record.namespace, tenant: record.tenant };
    await this.reserve(scope, record.id, max);
    // The record and its directory entry appear together; the id is fresh, so version 0 always matches.
    const written = await this.state.compareAndSwapWith(recordKey(scope.namespace, scope.tenant, record.id), 0, JSON.stringify(record), [
      { op: 'set', key: directoryKey(scope.namespace, scope.tenant, record.id), value: '1' },
    ]);
    if (!written.ok) throw errors.conflict(`recurring action already exists: ${record.id}`);
  }

  /** Writes `next` when the record is still at `version`; false when something else wrote first. */
  async swap(record: RecurringAction, version: number): Promise<boolean> {
    const key = recordKey(record.namespace, record.tenant, record.id);
    return (await this.state.compareAndSwap(key, version, JSON.stringify(record))).ok;
  }

  /**
   * Applies `change` by compare-and-swap, re-reading on a concurrent write. `change` may throw
   * (a 409 for a double pause). Null when the record does not exist.
   */
  async update(scope: RecurringScope, id: string, change: (record: RecurringAction) => RecurringAction): Promise<RecurringAction | null> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = await this.read(scope, id);
      if (!found) return null;
      const next = change(found.record);
      if (await this.swap(next, found.version)) return next;
    }
    throw errors.conflict(`recurring action ${id} is being changed concurrently; retry`);
  }

  /** True when this call deleted it. Deletion is final: ids are never reused, so a stale CAS cannot resurrect it. */
  async remove(scope: RecurringScope, id: string): Promise<boolean> {
    if (!(await this.state.delete(recordKey(scope.namespace, scope.tenant, id)))) return false;
    await this.release(scope, id);
    await this.state.delete(directoryKey(scope.namespace, scope.tenant, id));
    return true;
  }

  /** The pair's recurring actions in creation order. */
  async listPair(scope: RecurringScope): Promise<RecurringAction[]> {
    const roster = await this.readRoster(scope);
    const found = await Promise.all(roster.entries.map((e) => this.read(scope, e.id)));
    return found.flatMap((f) => (f ? [f.record] : []));
  }

  /** Every (scope, id) with a directory entry, all tenants: what a worker re-schedules on start. */
  async scanAll(): Promise<{ scope: RecurringScope; id: string }[]> {
    const out = new Map<string, { scope: RecurringScope; id: string }>();
    let cursor: string | undefined;
    do {
      const page = await this.state.scan(DIRECTORY_KIND, { ...(cursor ? { cursor } : {}), count: 500 });
      for (const { key } of page.entries) {
        // SCAN may return a key twice; the id is unique.
        out.set(key.id, { scope: { namespace: key.namespace, tenant: key.tenant }, id: key.id });
      }
      cursor = page.cursor ?? undefined;
    } while (cursor);
    return [...out.values()];
  }

  /** A directory entry whose record is gone (a delete that crashed half-way). */
  async forgetDirectoryEntry(scope: RecurringScope, id: string): Promise<void> {
    await this.state.delete(directoryKey(scope.namespace, scope.tenant, id));
  }

  private async reserve(scope: RecurringScope, id: string, max: number): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const roster = await this.readRoster(scope);
      let entries = roster.entries;
      if (entries.length >= max) entries = await this.pruneStale(scope, entries);
      if (entries.length >= max) {
        throw errors.conflict(`tenant already has the maximum of ${max} recurring actions (namespace=${scope.namespace} tenant=${scope.tenant})`);
      }
      const next = [...entries, { id, at: this.clock.now() }];
      if ((await this.state.compareAndSwap(rosterKey(scope.namespace, scope.tenant), roster.version, JSON.stringify(next))).ok) return;
    }
    throw errors.conflict(`recurring actions of namespace=${scope.namespace} tenant=${scope.tenant} are being created concurrently; retry`);
  }

  private async release(scope: RecurringScope, id: string): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const roster = await this.readRoster(scope);
      if (!roster.entries.some((e) => e.id === id)) return;
      const next = roster.entries.filter((e) => e.id !== id);
      if ((await this.state.compareAndSwap(rosterKey(scope.namespace, scope.tenant), roster.version, JSON.stringify(next))).ok) return;
    }
    // Left behind, the slot is reclaimed by pruneStale once it is old: its record is gone.
  }

  /** Drops reservations older than STALE_MS whose record does not exist (a create or delete that crashed). */
  private async pruneStale(scope: RecurringScope, entries: RosterEntry[]): Promise<RosterEntry[]> {
    const cutoff = this.clock.now() - STALE_MS;
    const alive = await Promise.all(entries.map(async (e) => e.at > cutoff || (await this.read(scope, e.id)) !== null));
    return entries.filter((_, i) => alive[i]);
  }

  private async readRoster(scope: RecurringScope): Promise<{ entries: RosterEntry[]; version: number }> {
    const stored = await this.state.getVersioned(rosterKey(scope.namespace, scope.tenant));
    if (!stored) return { entries: [], version: 0 };
    return { entries: decodeRoster(stored.value), version: stored.version };
  }
}

function decode(raw: string): RecurringAction | null {
  try {
    const parsed = RecurringAction.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function decodeRoster(raw: string): RosterEntry[] {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed)) return [];
    return parsed.filter((e): e is RosterEntry => typeof e === 'object' && e !== null && typeof e.id === 'string' && typeof e.at === 'number');
  } catch {
    return [];
  }
}
