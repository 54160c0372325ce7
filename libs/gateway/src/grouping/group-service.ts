import {
  errors,
  newId,
  type Action,
  type EventGroup,
  type GroupFlushResult,
  type GroupList,
  type GroupListQuery,
  type GroupedEvent,
  type GroupedOutcome,
} from '@sluice/core';
import type { RuleAction } from '@sluice/rules';
import { RETRY, retryCas, type Job, type WriteOp } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { groupIdentity } from './group-fields.js';
import { GROUP_FLUSH_KIND, flushId, groupRecordKey, groupSummaryKey, locatorKey, outboxKey, type FlushJobData, type GroupScope } from './group-keys.js';
import { FLUSH_JOB_ATTEMPTS, GroupNotifier, enqueueFlush, type DeliveryResult, type GroupNotifierDeps } from './group-notifier.js';
import type { Outbox } from './group-outbox.js';
import {
  CLOSED_SUMMARY,
  decodeGroup,
  encodeGroup,
  encodeTombstone,
  groupView,
  summaryOf,
  type Decoded,
  type GroupRecord,
  type GroupSettings,
} from './group-record.js';
import { listGroups, sweepOverdue } from './group-listing.js';
import { planAppend, planClose, planFlush, type FlushReason, type NextFlush } from './group-transitions.js';

export type GroupActionSpec = Extract<RuleAction, { type: 'group' }>;

/** A resolved group stays visible this long. */
const RESOLVED_TTL_MS = 60 * 60 * 1000;
/** A deleted group's tombstone (which keeps stale compare-and-swaps failing) lives this long. */
const TOMBSTONE_TTL_MS = 24 * 60 * 60 * 1000;
/** Readers skip a closed summary; it only has to outlive nothing. */
const CLOSED_SUMMARY_TTL_MS = 60 * 1000;
/** A claimed notification waits at most this long for its delivery. */
const OUTBOX_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const LOCATOR_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The notifier's dependencies (the service builds its notifier from them) plus the service's own counters. */
export interface GroupServiceDeps<P> extends Omit<GroupNotifierDeps<P>, 'onResult'> {
  onFlush?: (result: 'sent' | 'failed' | 'resolved') => void;
  onDropped?: (count: number) => void;
}

const iso = (ms: number): string => new Date(ms).toISOString();
/** Compare-and-swap rounds: enough for every replica appending to one hot group at once (each round, one of them wins). */
const HOT_GROUP_ATTEMPTS = 200;

/**
 * Event grouping (spec "Event group"): the `group` rule action appends, a flush job per (group,
 * cycle) sends one consolidated notification, and the groups endpoints read and force-flush.
 * Every change to a group is one compare-and-swap of its record (with its list summary and, for
 * a flush, its outbox in the same atomic write), so any replica and any worker may run any step.
 */
export class GroupService<P = unknown> {
  private readonly notifier: GroupNotifier<P>;
  private readonly log: Logger;

  constructor(private readonly deps: GroupServiceDeps<P>) {
    this.log = deps.logger.child({ component: 'grouping' });
    this.notifier = new GroupNotifier({ ...deps, ...(deps.onFlush ? { onResult: deps.onFlush } : {}) });
  }

  /** The rule action: one atomic append (or a new group), then the flush job when notify_at was (re)planned. */
  async add(action: Action, provider: string, rule: string, spec: GroupActionSpec): Promise<GroupedOutcome> {
    const { groupKey, labels } = groupIdentity(action, rule, spec.group_by);
    const scope: GroupScope = { namespace: action.namespace, tenant: action.tenant };
    const settings: GroupSettings = {
      group_wait_seconds: spec.group_wait_seconds,
      group_interval_seconds: spec.group_interval_seconds,
      repeat_interval_seconds: spec.repeat_interval_seconds ?? null,
      max_group_size: spec.max_group_size,
    };
    const origin = { groupKey, labels, ...scope, rule, provider, action_type: action.action_type, settings };
    const newGroupId = newId();
    let located = false;
    const plan = await retryCas({ what: `group ${groupKey}`, attempts: HOT_GROUP_ATTEMPTS }, async () => {
      const now = this.deps.clock.now();
      const event: GroupedEvent = {
        action_id: action.id,
        fingerprint: action.fingerprint ?? null,
        status: action.status ?? null,
        payload: action.payload,
        received_at: iso(now),
      };
      const { decoded, version } = await this.read(scope, groupKey);
      const planned = planAppend(decoded, event, origin, newGroupId, now);
      if (planned.duplicate) return planned;
      if (planned.created && !located) {
        await this.saveLocator(scope, groupKey, settings);
        located = true;
      }
      return (await this.write(scope, groupKey, version, decoded, planned.next, [])) ? planned : RETRY;
    });
    const { next } = plan;
    if (plan.replanned) await enqueueFlush(this.deps.scheduler, next, this.deps.clock.now());
    if (plan.dropped > 0) this.deps.onDropped?.(plan.dropped);
    return { outcome: 'grouped', action_id: action.id, group_id: next.group_id, group_size: next.events.length, notify_at: iso(next.notify_at) };
  }

  /** The flush job's handler: throws when delivery should be retried (the scheduler backs off). */
  async runFlushJob(job: Job): Promise<void> {
    const data = flushJobData(job.data);
    if (!data) {
      this.log.warn({ job_id: job.id }, 'group flush job without valid data; dropped');
      return;
    }
    const result = await this.flush(data, { finalAttempt: job.lastTry });
    if (result && !result.notified && result.retryable) throw new Error(result.error ?? `group flush ${job.id} not delivered`);
  }

  /**
   * Claims the flush of (group, cycle) unless already claimed, then delivers its notification.
   * Null when there is nothing to send (a stale cycle, a gone group, or an idle group resolved).
   */
  async flush(data: FlushJobData, opts: { finalAttempt: boolean }): Promise<DeliveryResult | null> {
    const scope: GroupScope = { namespace: data.namespace, tenant: data.tenant };
    const id = flushId(data);
    // Already claimed (this is a retry, or a duplicate delivery of the job): only deliver.
    if ((await this.deps.state.get(outboxKey(scope, id))) === null && !(await this.claim(scope, data))) return null;
    return this.notifier.deliver(scope, id, opts);
  }

  /** DELETE /v1/groups/{group_key}: flush now and close, whatever the state and notify_at. */
  async close(groupKey: string): Promise<GroupFlushResult> {
    const scope = await this.locate(groupKey);
    if (!scope) throw errors.notFound('group', groupKey);
    const { job, snapshot } = await retryCas({ what: `group ${groupKey}`, attempts: HOT_GROUP_ATTEMPTS }, async () => {
      const now = this.deps.clock.now();
      const { decoded, version } = await this.read(scope, groupKey);
      const plan = planClose(decoded, now);
      if (plan.kind === 'missing') throw errors.notFound('group', groupKey);
      if (plan.kind === 'resolved') throw errors.conflict(`group already resolved: ${groupKey}`);
      const outbox = this.outboxOf(plan.job, plan.snapshot, 'deleted', null, now);
      return (await this.write(scope, groupKey, version, decoded, null, [outbox])) ? plan : RETRY;
    });
    // A backstop should this process die before the provider answers: due after the lease, a no-op once sent.
    await this.deps.scheduler.enqueue(GROUP_FLUSH_KIND, { id: `${flushId(job)}:deleted`, data: job, delayMs: this.deps.leaseMs, attempts: FLUSH_JOB_ATTEMPTS });
    const delivery = await this.notifier.deliver(scope, flushId(job), { finalAttempt: false });
    return {
      group_id: snapshot.group_id,
      group_key: groupKey,
      event_count: snapshot.events.length,
      status: 'flushed',
      notified: delivery.notified,
      ...(delivery.error !== undefined && !delivery.notified ? { error: delivery.error } : {}),
    };
  }

  /** The namespace and tenant a group key belongs to, or null when no group under it is known. */
  async locate(groupKey: string): Promise<GroupScope | null> {
    const raw = await this.deps.state.get(locatorKey(groupKey));
    if (raw === null) return null;
    try {
      const [namespace, tenant] = JSON.parse(raw) as [unknown, unknown];
      return typeof namespace === 'string' && typeof tenant === 'string' ? { namespace, tenant } : null;
    } catch {
      return null;
    }
  }

  /** The live (pending, notified or recently resolved) group under a key, or null. */
  async find(groupKey: string): Promise<EventGroup | null> {
    const scope = await this.locate(groupKey);
    if (!scope) return null;
    const { decoded } = await this.read(scope, groupKey);
    return decoded.kind === 'live' ? groupView(decoded.group) : null;
  }

  list(query: GroupListQuery, visible?: (scope: GroupScope) => boolean): Promise<GroupList> {
    return listGroups(this.deps.state, query, visible);
  }

  /** Re-enqueues flushes overdue by more than `graceMs` (their enqueue was lost with a crashed process). */
  sweep(graceMs: number): Promise<number> {
    return sweepOverdue(this.deps.state, this.deps.scheduler, this.deps.clock.now(), graceMs);
  }

  /** One claim per (group, cycle): the CAS that moves the group on also writes the outbox. */
  private async claim(scope: GroupScope, data: FlushJobData): Promise<boolean> {
    return retryCas({ what: `group ${data.group_key}`, attempts: HOT_GROUP_ATTEMPTS }, async () => {
      const now = this.deps.clock.now();
      const { decoded, version } = await this.read(scope, data.group_key);
      const plan = planFlush(decoded, data, now);
      if (plan.kind === 'skip') {
        this.log.debug({ group_key: data.group_key, cycle: data.cycle, why: plan.why }, 'group flush skipped');
        return false;
      }
      if (plan.kind === 'resolve') {
        if (!(await this.write(scope, data.group_key, version, decoded, plan.next, []))) return RETRY;
        this.deps.onFlush?.('resolved');
        this.deps.events.emit({
          type: 'group_resolved',
          ...scope,
          at: iso(now),
          data: { group_id: plan.next.group_id, group_key: plan.next.group_key, event_count: plan.next.events.length },
        });
        return false;
      }
      const outbox = this.outboxOf(data, plan.snapshot, plan.reason, plan.nextFlush, now);
      if (!(await this.write(scope, data.group_key, version, decoded, plan.next, [outbox]))) return RETRY;
      if (plan.next) await this.saveLocator(scope, data.group_key, plan.next.settings);
      return true;
    });
  }

  private outboxOf(job: FlushJobData, snapshot: GroupRecord, reason: FlushReason, next: NextFlush | null, now: number): WriteOp {
    const scope = { namespace: job.namespace, tenant: job.tenant };
    const id = flushId(job);
    const outbox: Outbox = { flush_id: id, job, reason, group: groupView(snapshot), next, claimed_at: now, sent_at: null, failed: null };
    return { op: 'set', key: outboxKey(scope, id), value: JSON.stringify(outbox), ttlMs: OUTBOX_TTL_MS };
  }

  private async read(scope: GroupScope, groupKey: string): Promise<{ decoded: Decoded; version: number }> {
    const stored = await this.deps.state.getVersioned(groupRecordKey(scope, groupKey));
    return { decoded: decodeGroup(stored?.value), version: stored?.version ?? 0 };
  }

  /**
   * Writes the record (null: a tombstone) and its list summary, plus `extra`, all or nothing.
   * False when the version moved (the caller re-reads and re-plans). A record that reached an end
   * state then gets an expiry in a second swap, skipped harmlessly if a new event got there first.
   */
  private async write(scope: GroupScope, groupKey: string, version: number, previous: Decoded, next: GroupRecord | null, extra: WriteOp[]): Promise<boolean> {
    const { state } = this.deps;
    const now = this.deps.clock.now();
    const key = groupRecordKey(scope, groupKey);
    const summaryKey = groupSummaryKey(scope, groupKey);
    const ended = next === null || next.state === 'resolved';
    const value = next ? encodeGroup(next) : encodeTombstone(previous.kind === 'live' ? previous.group.group_id : '', now);
    const summary: WriteOp = next
      ? { op: 'set', key: summaryKey, value: JSON.stringify(summaryOf(next)), ...(ended ? { ttlMs: RESOLVED_TTL_MS } : {}) }
      : { op: 'set', key: summaryKey, value: CLOSED_SUMMARY, ttlMs: CLOSED_SUMMARY_TTL_MS };
    const result = await state.compareAndSwapWith(key, version, value, [summary, ...extra]);
    if (result.ok && ended) await state.compareAndSwap(key, result.version, value, { ttlMs: next ? RESOLVED_TTL_MS : TOMBSTONE_TTL_MS });
    return result.ok;
  }

  /** The locator is a function of the key, so it is simply (re)written; it outlives the group's longest quiet period. */
  private async saveLocator(scope: GroupScope, groupKey: string, settings: GroupSettings): Promise<void> {
    const longest = Math.max(settings.group_wait_seconds, settings.group_interval_seconds, settings.repeat_interval_seconds ?? 0) * 1000;
    await this.deps.state.set(locatorKey(groupKey), JSON.stringify([scope.namespace, scope.tenant]), { ttlMs: LOCATOR_TTL_MS + 2 * longest });
  }
}

function flushJobData(data: unknown): FlushJobData | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  const ok = ['namespace', 'tenant', 'group_key', 'group_id'].every((k) => typeof d[k] === 'string') && typeof d['cycle'] === 'number';
  return ok ? (d as unknown as FlushJobData) : null;
}
