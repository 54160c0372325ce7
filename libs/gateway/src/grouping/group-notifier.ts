import { newId, type Clock } from '@sluice/core';
import type { Scheduler, StateKey, StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import type { InternalEventBus } from '../events/internal-events.js';
import { providerNotFound, type ActionExecutor, type ProviderLookup } from '../stages/execute-stage.js';
import { GROUP_FLUSH_KIND, deliveryLeaseKey, flushId, outboxKey, type GroupScope } from './group-keys.js';
import { decodeOutbox, notificationAction, type Outbox } from './group-outbox.js';

/** A delivered (or abandoned) outbox is kept this long, as long as the scheduler remembers job ids. */
const SENT_OUTBOX_TTL_MS = 24 * 60 * 60 * 1000;

/** Attempts of a flush job: enough backoff (1 s doubling: ~8.5 min in all) to outlast a dead holder's lease. */
export const FLUSH_JOB_ATTEMPTS = 10;

export interface DeliveryResult {
  notified: boolean;
  /** True when trying again later may succeed (the provider failed retryably, or another process holds the delivery). */
  retryable: boolean;
  error?: string;
}

export interface GroupNotifierDeps<P> {
  state: StateStore;
  scheduler: Pick<Scheduler, 'enqueue'>;
  clock: Clock;
  providers: ProviderLookup<P>;
  executor: ActionExecutor<P>;
  events: Pick<InternalEventBus, 'emit'>;
  logger: Logger;
  /** How long one delivery may hold a flush before another process may take it over (its holder presumed dead). */
  leaseMs: number;
  onResult?: (result: 'sent' | 'failed') => void;
}

/** Enqueues a flush job for `job` at its notify_at; the deterministic id makes a repeat a no-op. */
export async function enqueueFlush(
  scheduler: Pick<Scheduler, 'enqueue'>,
  job: GroupScope & { group_key: string; group_id: string; cycle: number; notify_at: number },
  now: number,
  opts: { followsOn?: boolean } = {},
): Promise<void> {
  const data = { namespace: job.namespace, tenant: job.tenant, group_key: job.group_key, group_id: job.group_id, cycle: job.cycle };
  await scheduler.enqueue(GROUP_FLUSH_KIND, {
    id: flushId(data),
    data,
    delayMs: Math.max(0, job.notify_at - now),
    attempts: FLUSH_JOB_ATTEMPTS,
    // A later cycle is a trace of its own, linked to this one: a long-lived group's trace would otherwise grow for days.
    ...(opts.followsOn ? { traceLink: true } : {}),
  });
}

/**
 * Sends an outbox's notification through its provider, at most one process at a time: a lease
 * (set-if-absent with expiry) is taken first and the outbox is re-read under it, so a flush
 * already marked sent is never sent again. What is not exactly-once: a holder that dies after
 * the provider accepted and before the outbox is marked sent; the next holder (after the lease
 * expires) sends again, with the same notification id.
 */
export class GroupNotifier<P> {
  private readonly log: Logger;

  constructor(private readonly deps: GroupNotifierDeps<P>) {
    this.log = deps.logger.child({ component: 'grouping' });
  }

  async deliver(scope: GroupScope, id: string, opts: { finalAttempt: boolean }): Promise<DeliveryResult> {
    const { state, clock } = this.deps;
    const first = decodeOutbox(await state.get(outboxKey(scope, id)));
    if (!first) return { notified: false, retryable: false, error: `no notification is owed for flush ${id}` };
    // The claim planned the next cycle; (re-)enqueue it on every attempt in case the claimer died first.
    if (first.next) await enqueueFlush(this.deps.scheduler, first.next, clock.now(), { followsOn: true });
    const settled = settledResult(first);
    if (settled) return settled;
    const lease = { key: deliveryLeaseKey(scope, id), token: newId() };
    if (!(await state.setIfAbsent(lease.key, lease.token, { ttlMs: this.deps.leaseMs }))) {
      return { notified: false, retryable: true, error: `flush ${id} is being delivered by another process` };
    }
    // Re-read under the lease: a holder may have finished between the first read and our lease.
    const outbox = decodeOutbox(await state.get(outboxKey(scope, id)));
    if (!outbox) return { notified: false, retryable: false, error: `no notification is owed for flush ${id}` };
    return settledResult(outbox) ?? this.send(scope, outbox, lease, opts.finalAttempt);
  }

  private async send(scope: GroupScope, outbox: Outbox, lease: { key: StateKey; token: string }, finalAttempt: boolean): Promise<DeliveryResult> {
    const { state, clock } = this.deps;
    const action = notificationAction(outbox);
    const provider = this.deps.providers.get(action.provider);
    const result = provider ? await this.deps.executor.execute(provider, action) : ({ ok: false, error: providerNotFound(action.provider) } as const);
    if (result.ok) {
      await state.set(outboxKey(scope, outbox.flush_id), settled(outbox, { sent_at: clock.now() }), { ttlMs: SENT_OUTBOX_TTL_MS });
      this.deps.onResult?.('sent');
      this.deps.events.emit({
        type: 'group_flushed',
        namespace: scope.namespace,
        tenant: scope.tenant,
        at: new Date(clock.now()).toISOString(),
        data: { group_id: outbox.group.group_id, group_key: outbox.group.group_key, event_count: outbox.group.event_count, reason: outbox.reason },
      });
      return { notified: true, retryable: false };
    }
    const { error } = result;
    // Give the flush back at once, so a retry need not wait for the lease to expire; a final
    // failure is written first, so a deliverer that takes the lease next finds it settled (given
    // back before, another's delivery could succeed and then be overwritten as failed). Only our
    // own lease is given back: one that expired during a slow call may be another's by now.
    const giveBack = () => state.deleteIfValue(lease.key, lease.token);
    if (error.retryable && !finalAttempt) {
      await giveBack();
      return { notified: false, retryable: true, error: error.message };
    }
    await state.set(outboxKey(scope, outbox.flush_id), settled(outbox, { failed: error.message }), { ttlMs: SENT_OUTBOX_TTL_MS });
    await giveBack();
    this.deps.onResult?.('failed');
    this.log.error(
      { flush_id: outbox.flush_id, namespace: scope.namespace, tenant: scope.tenant, code: error.code, err: error.message },
      'group notification abandoned',
    );
    return { notified: false, retryable: false, error: error.message };
  }
}

/**
 * A settled outbox as kept (a day, so a retried flush finds it settled): without the group's
 * events, which nothing reads once the notification is sent or given up, and which would hold
 * the whole group's size in the store for that day.
 */
function settled(outbox: Outbox, change: Pick<Outbox, 'sent_at'> | Pick<Outbox, 'failed'>): string {
  return JSON.stringify({ ...outbox, group: { ...outbox.group, events: [] }, ...change });
}

function settledResult(outbox: Outbox): DeliveryResult | null {
  if (outbox.sent_at !== null) return { notified: true, retryable: false };
  if (outbox.failed !== null) return { notified: false, retryable: false, error: outbox.failed };
  return null;
}
