import {
  DeadLetter,
  derivedId,
  errors,
  isoString,
  newId,
  type Action,
  type Clock,
  type DeadLetterFilter,
  type DeadLetterStats,
  type DispatchOutcome,
  type FailureInfo,
} from '@sluice/core';
import { RecordRepository, type StateStore, type StoredRecord } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';

/** The key kind of dead-letter records: never rename without a migration. */
const DEAD_LETTER_KIND = 'dead-letter';
/** How long a retry holds its entry; a process dying mid-retry frees it after this. */
const RETRY_LEASE_MS = 5 * 60_000;
/** How long a drain's answer may take to be written before its entries are given back (its process died). */
const DRAIN_LEASE_MS = 60_000;

/** Entries a drain has taken: removed once its answer is written (commit), or given back (release). */
export interface DrainTaken {
  entries: DeadLetter[];
  commit(): Promise<void>;
  release(): Promise<void>;
}

/** What a retry dispatches through (the gateway, without dead-lettering a new failure: the entry is kept instead). */
export type RedispatchFn = (action: Action) => Promise<DispatchOutcome>;

export interface DeadLetterQueueDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** Most entries one (namespace, tenant) keeps; a failure beyond it is logged and counted, not queued. */
  maxPerTenant: number;
  /** Told of each failure queued (sluice_dead_letters_total). */
  onQueued?: () => void;
  /** Told of each failure not queued because its tenant's queue is full (sluice_dead_letters_dropped_total). */
  onDropped?: () => void;
}

type Visible = (entry: DeadLetter) => boolean;
/** `retrying_until`: leased by a retry (still listed); `draining_until`: taken by a drain whose answer is being written (hidden). */
type Stored = DeadLetter & { retrying_until?: string; draining_until?: string };

function matches(entry: DeadLetter, filter: DeadLetterFilter): boolean {
  return (
    (filter.namespace === undefined || entry.namespace === filter.namespace) &&
    (filter.tenant === undefined || entry.tenant === filter.tenant) &&
    (filter.provider === undefined || entry.provider === filter.provider) &&
    (filter.error_code === undefined || entry.error.code === filter.error_code)
  );
}

function publicForm(stored: Stored): DeadLetter {
  const { retrying_until: _lease, draining_until: _drain, ...entry } = stored;
  return entry;
}

/**
 * The dead-letter queue: actions whose provider kept failing with a retryable error until the
 * executor's retries ran out, one record per failure in its tenant's scope, shared by every
 * replica. Drain and retry claim entries by compare-and-swap, so two replicas never hand out or
 * re-execute the same entry twice.
 */
export class DeadLetterQueue {
  private readonly records: RecordRepository<Stored>;
  private readonly log: Logger;

  constructor(private readonly deps: DeadLetterQueueDeps) {
    this.log = deps.logger.child({ component: 'dlq' });
    this.records = new RecordRepository<Stored>({
      state: deps.state,
      clock: deps.clock,
      kind: DEAD_LETTER_KIND,
      label: 'dead letter',
      decode: (raw) => {
        const parsed = DeadLetter.safeParse(raw);
        if (!parsed.success) return null;
        const { retrying_until: lease, draining_until: drain } = raw as { retrying_until?: unknown; draining_until?: unknown };
        return {
          ...parsed.data,
          ...(typeof lease === 'string' ? { retrying_until: lease } : {}),
          ...(typeof drain === 'string' ? { draining_until: drain } : {}),
        };
      },
      globalIds: true,
      maxPerScope: deps.maxPerTenant,
    });
  }

  /**
   * Queues a failed action (awaited before the dispatch answers, so an acknowledged failure is
   * never lost). The entry's id is derived from the action's, so an action queued again (a chain
   * step run again after its worker died between queuing and recording the step) is queued once.
   */
  async push(action: Action, provider: string, error: FailureInfo): Promise<void> {
    const at = isoString(this.deps.clock.now());
    const { id: action_id, namespace, tenant, action_type } = action;
    const entry: DeadLetter = {
      id: derivedId('dead-letter', namespace, tenant, action_id),
      namespace,
      tenant,
      provider,
      action_type,
      action_id,
      action,
      error,
      attempts: error.attempts,
      retries: 0,
      created_at: at,
      updated_at: at,
    };
    const result = await this.records.create(entry);
    if (result === 'created') {
      this.deps.onQueued?.();
      return;
    }
    if (result === 'id-taken') {
      this.log.debug({ namespace, tenant, action: action_id }, 'failed action already queued');
      return;
    }
    this.deps.onDropped?.();
    this.log.error({ namespace, tenant, action: action_id, result }, 'dead-letter queue of the tenant is full; failed action not queued');
  }

  /** Matching entries the caller may see, oldest first, one page. */
  async list(filter: DeadLetterFilter, page: { limit: number; offset: number }, visible: Visible): Promise<{ entries: DeadLetter[]; count: number }> {
    const all = await this.matching(filter, visible);
    return { entries: all.slice(page.offset, page.offset + page.limit).map((s) => publicForm(s.record)), count: all.length };
  }

  async stats(visible: Visible): Promise<Omit<DeadLetterStats, 'enabled'>> {
    const all = await this.matching({}, visible);
    const records = all.map((s) => s.record);
    return {
      count: all.length,
      by_tenant: countBy(records, (r) => r.tenant),
      by_provider: countBy(records, (r) => r.provider),
      by_error_code: countBy(records, (r) => r.error.code),
    };
  }

  /** 404 when unknown. */
  async get(id: string): Promise<DeadLetter> {
    const found = await this.visible(id);
    if (!found) throw errors.notFound('dead letter', id);
    return publicForm(found.record);
  }

  /**
   * Takes up to `limit` matching entries (not those leased by a retry or another drain) under a
   * lease; each is handed to exactly one caller. They are removed by `commit`, once the answer
   * carrying them has been written, and given back by `release`, or when the lease ends if the
   * process dies first: a drain whose answer never left loses nothing (removing them before
   * answering lost every one of a drain cut short by a client timeout or a killed replica).
   */
  async drain(filter: DeadLetterFilter, limit: number, visible: Visible): Promise<DrainTaken> {
    const taken: StoredRecord<Stored>[] = [];
    const now = this.deps.clock.now();
    for (const stored of await this.matching(filter, visible)) {
      if (taken.length >= limit) break;
      if (isUntil(stored.record.retrying_until, now)) continue;
      // From the version read: an entry leased (or drained) since is skipped, not taken from its holder.
      const mine = await this.records.swap(stored, { ...stored.record, draining_until: isoString(now + DRAIN_LEASE_MS) });
      if (mine) taken.push(mine);
    }
    return {
      entries: taken.map((t) => publicForm(t.record)),
      commit: async () => {
        for (const t of taken) await this.records.removeAt(t);
      },
      release: async () => {
        for (const t of taken) await this.records.swap(t, publicForm(t.record));
      },
    };
  }

  /**
   * Dispatches the entry's action again (same action, new id, labelled `dlq_retry_of`). Success
   * (executed or rerouted) removes the entry; any other outcome keeps it with the new error and
   * attempts. The entry is leased first, so a retry racing another (or a drain) runs at most once.
   */
  async retry(id: string, redispatch: RedispatchFn): Promise<{ outcome: DispatchOutcome; removed: boolean }> {
    const leased = await this.lease(id);
    const { action } = leased.record;
    const labels = { ...(action.metadata?.labels ?? {}), dlq_retry_of: leased.record.action_id };
    const outcome = await redispatch({
      ...action,
      id: newId(),
      created_at: isoString(this.deps.clock.now()),
      metadata: { ...action.metadata, labels },
    } as Action);
    if (outcome.outcome === 'executed' || outcome.outcome === 'rerouted') {
      await this.records.remove(id);
      return { outcome, removed: true };
    }
    const at = isoString(this.deps.clock.now());
    await this.records.update(id, (entry) => {
      const { retrying_until: _lease, ...rest } = entry;
      const error = outcome.outcome === 'failed' ? outcome.error : entry.error;
      return {
        ...rest,
        error,
        attempts: entry.attempts + (outcome.outcome === 'failed' ? outcome.error.attempts : 0),
        retries: entry.retries + 1,
        updated_at: at,
      };
    });
    return { outcome, removed: false };
  }

  private async lease(id: string): Promise<StoredRecord<Stored>> {
    const found = await this.visible(id);
    if (!found) throw errors.notFound('dead letter', id);
    const now = this.deps.clock.now();
    if (isUntil(found.record.retrying_until, now)) throw errors.conflict(`dead letter ${id} is being retried`);
    const leased = await this.records.swap(found, { ...found.record, retrying_until: isoString(now + RETRY_LEASE_MS) });
    if (leased) return leased;
    // Something wrote first: a drain that took the entry (404), or another retry's lease (409).
    if (!(await this.visible(id))) throw errors.notFound('dead letter', id);
    throw errors.conflict(`dead letter ${id} is being retried`);
  }

  /** Entries a drain has taken are gone to every reader, unless its answer never left (the lease ends). */
  private async matching(filter: DeadLetterFilter, visible: Visible): Promise<StoredRecord<Stored>[]> {
    const { records } = await this.records.listAll();
    const now = this.deps.clock.now();
    return records.filter((s) => !isUntil(s.record.draining_until, now) && matches(s.record, filter) && visible(s.record));
  }

  private async visible(id: string): Promise<StoredRecord<Stored> | null> {
    const found = await this.records.find(id);
    return found && !isUntil(found.record.draining_until, this.deps.clock.now()) ? found : null;
  }
}

/** Whether a lease (`retrying_until`, `draining_until`) holds at `now`. */
function isUntil(lease: string | undefined, now: number): boolean {
  return lease !== undefined && Date.parse(lease) > now;
}

/** Counts by name in a Map, so a tenant named `constructor` or `__proto__` is counted like any other. */
function countBy<T>(items: readonly T[], nameOf: (item: T) => string): Record<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(nameOf(item), (counts.get(nameOf(item)) ?? 0) + 1);
  return Object.fromEntries(counts);
}
