import {
  errors,
  newId,
  toRecurringSummary,
  type Clock,
  type RecurringAction,
  type RecurringCreateInput,
  type RecurringList,
  type RecurringListQuery,
  type RecurringUpdateInput,
} from '@sluice/core';
import { RETRY, retryCas, type RecordRepository, type Scheduler, type StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import type { InternalEventBus } from '../events/internal-events.js';
import type { Gateway } from '../gateway.js';
import { isPastDue, planOccurrence, upcoming, withNext } from './occurrence.js';
import { occurrenceAction, occurrenceCaller } from './occurrence-action.js';
import type { RecurringScope } from './recurring-input.js';
import { isFireJobData } from './recurring-keys.js';
import { recurringRecords } from './recurring-records.js';
import { applyPatch, newRecord, patchedSchedule } from './recurring-record.js';
import { RecurringScheduling } from './recurring-scheduling.js';
import { secondsCronAllowed } from './cron-schedule.js';

export interface RecurringServiceDeps {
  state: StateStore;
  scheduler: Scheduler;
  clock: Clock;
  logger: Logger;
  events: InternalEventBus;
  /** Most recurring actions one (namespace, tenant) pair may hold. */
  maxPerTenant: number;
  /** Test mode: accept 6-field (seconds) cron. Default: the SLUICE_TEST_SECONDS_CRON environment flag. */
  allowSecondsCron?: boolean;
}

/** What one delivery of an occurrence job did (returned for tests and logs). */
export type FireResult = 'fired' | 'disabled' | 'not-due' | 'ended' | 'missed' | 'gone' | 'contended' | 'invalid';

const MAX_FIRE_ATTEMPTS = 5;
const DECLARE_CONCURRENCY = 16;

/**
 * Recurring actions: CRUD, pause and resume for the API, and the occurrence handler for the
 * workers. State lives only in the StateStore; the Scheduler holds one schedule per enabled
 * action, declared by whoever changes the record and re-declared by every worker on start.
 */
export class RecurringService {
  private readonly records: RecordRepository<RecurringAction>;
  private readonly scheduling: RecurringScheduling;
  private readonly log: Logger;
  private readonly allowSeconds: boolean;

  constructor(private readonly deps: RecurringServiceDeps) {
    this.records = recurringRecords(deps.state, deps.clock, deps.maxPerTenant);
    this.scheduling = new RecurringScheduling(deps.scheduler, async (scope, id) => (await this.records.get({ ...scope, id }))?.record ?? null);
    this.log = deps.logger.child({ component: 'recurring' });
    this.allowSeconds = deps.allowSecondsCron ?? secondsCronAllowed();
  }

  /** 400 for a bad cron, zone or missing field; 409 when the pair is at its maximum. */
  async create(input: RecurringCreateInput, scope: RecurringScope): Promise<RecurringAction> {
    const record = newRecord(input, scope, { id: newId(), nowMs: this.deps.clock.now(), allowSeconds: this.allowSeconds });
    const result = await this.records.create(record);
    if (result === 'scope-full') {
      throw errors.conflict(
        `tenant already has the maximum of ${this.deps.maxPerTenant} recurring actions (namespace=${scope.namespace} tenant=${scope.tenant})`,
      );
    }
    if (result !== 'created') throw errors.conflict(`recurring action already exists: ${record.id}`);
    await this.scheduling.reconcile(scope, record.id);
    return record;
  }

  async get(scope: RecurringScope, id: string): Promise<RecurringAction> {
    const found = await this.records.get({ ...scope, id });
    if (!found) throw errors.notFound('recurring action', id);
    return found.record;
  }

  /** The pair's actions in creation order; `visible` leaves out those the caller may not see (counted out too). */
  async list(query: RecurringListQuery, visible: (action: RecurringAction) => boolean = () => true): Promise<RecurringList> {
    const wantEnabled = query.enabled ?? (query.status === undefined ? undefined : query.status === 'active');
    const pair = await this.records.list({ namespace: query.namespace, tenant: query.tenant });
    const all = pair.records.map((s) => s.record).filter((r) => (wantEnabled === undefined || r.enabled === wantEnabled) && visible(r));
    return { recurring_actions: all.slice(query.offset, query.offset + query.limit).map(toRecurringSummary), count: all.length };
  }

  async update(scope: RecurringScope, id: string, patch: RecurringUpdateInput): Promise<RecurringAction> {
    // Refuses a bad cron or zone (400) before anything is written; the schedule written is rebuilt
    // from the record being swapped, so a concurrent change of the other field is kept.
    patchedSchedule(patch, this.allowSeconds, await this.get(scope, id));
    const updated = await this.records.update({ ...scope, id }, (stored) =>
      applyPatch(stored, patch, patchedSchedule(patch, this.allowSeconds, stored), this.deps.clock.now()),
    );
    if (!updated) throw errors.notFound('recurring action', id);
    await this.scheduling.reconcile(scope, id);
    return updated.record;
  }

  async delete(scope: RecurringScope, id: string): Promise<void> {
    if (!(await this.records.remove({ ...scope, id }))) throw errors.notFound('recurring action', id);
    await this.scheduling.cancel(id);
  }

  /** No future executions; 409 when already paused (or finished). */
  async pause(scope: RecurringScope, id: string): Promise<RecurringAction> {
    const updated = await this.records.update({ ...scope, id }, (stored) => {
      if (!stored.enabled) throw errors.conflict('recurring action is already paused');
      return { ...withNext(stored, null), updated_at: this.iso() };
    });
    if (!updated) throw errors.notFound('recurring action', id);
    await this.scheduling.reconcile(scope, id);
    return updated.record;
  }

  /** The next execution is recomputed from now; 409 when already active, or when its limits leave none. */
  async resume(scope: RecurringScope, id: string): Promise<RecurringAction> {
    const updated = await this.records.update({ ...scope, id }, (stored) => {
      if (stored.enabled) throw errors.conflict('recurring action is already active');
      const next = upcoming(stored, this.deps.clock.now());
      if (next === null) throw errors.conflict('recurring action has no executions left (max_executions reached or end_date passed)');
      return { ...withNext({ ...stored, enabled: true }, next), updated_at: this.iso() };
    });
    if (!updated) throw errors.notFound('recurring action', id);
    await this.scheduling.reconcile(scope, id);
    return updated.record;
  }

  /**
   * The job handler: one delivery of an action's schedule. Claims the due occurrence with a
   * compare-and-swap on the record and dispatches it through `gateway` (the full pipeline); any other
   * delivery of the same occurrence loses or finds it claimed, and does nothing.
   */
  async fire(data: unknown, gateway: Pick<Gateway, 'dispatch'>): Promise<FireResult> {
    if (!isFireJobData(data)) {
      this.log.error({ data }, 'recurring job without namespace, tenant and id; ignored');
      return 'invalid';
    }
    const scope = { namespace: data.namespace, tenant: data.tenant };
    const onExhausted = (): FireResult => {
      this.log.warn({ recurring_id: data.id }, 'recurring occurrence not claimed after repeated conflicts');
      return 'contended';
    };
    return retryCas<FireResult>({ what: `recurring action ${data.id}`, attempts: MAX_FIRE_ATTEMPTS, onExhausted }, async () => {
      const found = await this.records.get({ ...scope, id: data.id });
      if (!found) {
        // Deleted (ids are never reused): a schedule left by a delete that raced a resume.
        await this.scheduling.cancel(data.id);
        return 'gone';
      }
      const nowMs = this.deps.clock.now();
      const plan = planOccurrence(found.record, nowMs);
      if (plan.kind === 'idle') return plan.reason;
      if (!(await this.records.swap(found, plan.record))) return RETRY; // an edit, pause or another delivery won: re-read
      if (plan.kind === 'skip') {
        this.log.info({ recurring_id: data.id, reason: plan.reason, next_execution: plan.record.next_execution }, 'recurring occurrence skipped');
        if (!plan.record.enabled) await this.scheduling.reconcile(scope, data.id);
        return plan.reason;
      }
      await this.dispatch(gateway, plan.record, plan.slot, nowMs);
      if (!plan.record.enabled) await this.scheduling.reconcile(scope, data.id); // finished: drop the schedule
      return 'fired';
    });
  }

  /**
   * Declares the schedule of every stored action (a worker's start-up: BullMQ may have lost
   * them, or be a new, empty Redis). An occurrence missed while no worker ran is skipped here,
   * so next_execution reads true at once. Returns how many actions are scheduled.
   */
  async declareAll(): Promise<number> {
    const entries = (await this.records.listAll()).records.map(({ record }) => record);
    const scheduled = await this.declareEach(entries);
    this.log.info({ recurring_actions: entries.length, scheduled }, 'recurring schedules declared');
    return scheduled;
  }

  /**
   * Declares again every enabled action whose next execution is past due by more than the misfire
   * grace: its schedule is missing (a replica died between the action's write and its schedule,
   * which the write's retry does not repair) or stuck. Declaring is idempotent.
   */
  async declareOverdue(): Promise<number> {
    const nowMs = this.deps.clock.now();
    const overdue = (await this.records.listAll()).records.map(({ record }) => record).filter((r) => isPastDue(r, nowMs));
    if (overdue.length === 0) return 0;
    const scheduled = await this.declareEach(overdue);
    this.log.warn({ recurring_actions: overdue.length, scheduled }, 'recurring actions past due without a run; their schedules declared again');
    return scheduled;
  }

  private async declareEach(entries: readonly RecurringAction[]): Promise<number> {
    let scheduled = 0;
    let next = 0;
    const lane = async (): Promise<void> => {
      for (let i = next++; i < entries.length; i = next++) {
        const entry = entries[i];
        if (entry && (await this.declare({ namespace: entry.namespace, tenant: entry.tenant }, entry.id))) scheduled += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(DECLARE_CONCURRENCY, entries.length) }, lane));
    return scheduled;
  }

  private async declare(scope: RecurringScope, id: string): Promise<boolean> {
    const found = await this.records.get({ ...scope, id });
    if (!found) {
      await this.scheduling.cancel(id);
      return false;
    }
    const { record } = found;
    const nowMs = this.deps.clock.now();
    if (isPastDue(record, nowMs)) {
      // Lost to a concurrent write is fine: that writer moved next_execution itself.
      await this.records.swap(found, withNext(record, upcoming(record, nowMs)));
    }
    await this.scheduling.reconcile(scope, id);
    return (await this.records.get({ ...scope, id }))?.record.enabled === true;
  }

  private async dispatch(gateway: Pick<Gateway, 'dispatch'>, record: RecurringAction, slotMs: number, nowMs: number): Promise<void> {
    const action = occurrenceAction(record, slotMs);
    const occurrence = new Date(slotMs).toISOString();
    const event = (outcome: string) =>
      this.deps.events.emit({
        type: 'recurring_fired',
        namespace: record.namespace,
        tenant: record.tenant,
        at: new Date(nowMs).toISOString(),
        data: { recurring_id: record.id, occurrence, action_id: action.id, outcome, execution_count: record.execution_count },
      });
    try {
      const outcome = await gateway.dispatch(action, { caller: occurrenceCaller(record.id) });
      event(outcome.outcome);
      this.log.debug({ recurring_id: record.id, occurrence, action_id: action.id, outcome: outcome.outcome }, 'recurring action fired');
    } catch (err) {
      // The occurrence is claimed and stays claimed: at most once, never a second dispatch of it.
      event('error');
      this.log.error({ err, recurring_id: record.id, occurrence, action_id: action.id }, 'recurring dispatch failed');
      throw err;
    }
  }

  private iso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
