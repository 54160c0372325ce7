import {
  DeadLetter,
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
type Stored = DeadLetter & { retrying_until?: string };

function matches(entry: DeadLetter, filter: DeadLetterFilter): boolean {
  return (
    (filter.namespace === undefined || entry.namespace === filter.namespace) &&
    (filter.tenant === undefined || entry.tenant === filter.tenant) &&
    (filter.provider === undefined || entry.provider === filter.provider) &&
    (filter.error_code === undefined || entry.error.code === filter.error_code)
  );
}

function publicForm(stored: Stored): DeadLetter {
  const { retrying_until: _lease, ...entry } = stored;
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
        const lease = (raw as { retrying_until?: unknown }).retrying_until;
        return typeof lease === 'string' ? { ...parsed.data, retrying_until: lease } : parsed.data;
      },
      globalIds: true,
      maxPerScope: deps.maxPerTenant,
    });
  }

  /** Queues a failed action (awaited before the dispatch answers, so an acknowledged failure is never lost). */
  async push(action: Action, provider: string, error: FailureInfo): Promise<void> {
    const at = isoString(this.deps.clock.now());
    const { id: action_id, namespace, tenant, action_type } = action;
    const entry: DeadLetter = {
      id: newId(),
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
    const found = await this.records.find(id);
    if (!found) throw errors.notFound('dead letter', id);
    return publicForm(found.record);
  }

  /** Removes and returns up to `limit` matching entries (not those being retried); each is handed to exactly one caller. */
  async drain(filter: DeadLetterFilter, limit: number, visible: Visible): Promise<DeadLetter[]> {
    const drained: DeadLetter[] = [];
    const now = this.deps.clock.now();
    for (const stored of await this.matching(filter, visible)) {
      if (drained.length >= limit) break;
      const { record } = stored;
      if (record.retrying_until && Date.parse(record.retrying_until) > now) continue;
      // From the version read: an entry leased (or drained) since is skipped, not taken from its holder.
      if (await this.records.removeAt(stored)) drained.push(publicForm(record));
    }
    return drained;
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
    const found = await this.records.find(id);
    if (!found) throw errors.notFound('dead letter', id);
    const now = this.deps.clock.now();
    if (found.record.retrying_until && Date.parse(found.record.retrying_until) > now) throw errors.conflict(`dead letter ${id} is being retried`);
    const leased = await this.records.swap(found, { ...found.record, retrying_until: isoString(now + RETRY_LEASE_MS) });
    if (leased) return leased;
    // Something wrote first: a drain that took the entry (404), or another retry's lease (409).
    if (!(await this.records.find(id))) throw errors.notFound('dead letter', id);
    throw errors.conflict(`dead letter ${id} is being retried`);
  }

  private async matching(filter: DeadLetterFilter, visible: Visible): Promise<StoredRecord<Stored>[]> {
    const { records } = await this.records.listAll();
    return records.filter((s) => matches(s.record, filter) && visible(s.record));
  }
}

/** Counts by name in a Map, so a tenant named `constructor` or `__proto__` is counted like any other. */
function countBy<T>(items: readonly T[], nameOf: (item: T) => string): Record<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(nameOf(item), (counts.get(nameOf(item)) ?? 0) + 1);
  return Object.fromEntries(counts);
}
