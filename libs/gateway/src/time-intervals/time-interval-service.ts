import {
  StoredTimeInterval,
  errors,
  isoString,
  type Clock,
  type TimeInterval,
  type TimeIntervalCreateInput,
  type TimeIntervalListQuery,
  type TimeIntervalScopeQuery,
  type TimeIntervalUpdateInput,
} from '@sluice/core';
import { RecordRepository, type StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { IntervalIndex } from './interval-index.js';
import { compileSchedule } from './interval-schedule.js';
import { decodeWith } from '../policies/schema-decoder.js';

/** The key kind of time-interval records: never rename without a migration. */
const TIME_INTERVAL_KIND = 'time-interval';

export interface TimeIntervalServiceDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** How often replicas poll the shared generation behind pub/sub. */
  syncIntervalMs: number;
}

export interface TimeIntervalListOptions extends TimeIntervalListQuery {
  visible: (interval: StoredTimeInterval) => boolean;
}

function describeScope(scope: TimeIntervalScopeQuery, name: string): string {
  return `${scope.namespace}/${scope.tenant}/${name}`;
}

/**
 * Time intervals, shared by every replica: records named uniquely within their (namespace,
 * tenant), and on each replica a compiled snapshot refreshed by every write here before it
 * answers, by the broadcast of any other replica's write, and by a poll of the generation
 * behind it. Dispatch reads only the snapshot.
 */
export class TimeIntervalService {
  private snapshot = new IntervalIndex([]);
  private readonly records: RecordRepository<StoredTimeInterval>;
  private readonly log: Logger;

  constructor(private readonly deps: TimeIntervalServiceDeps) {
    this.log = deps.logger.child({ component: 'time-intervals' });
    this.records = new RecordRepository<StoredTimeInterval>({
      state: deps.state,
      clock: deps.clock,
      kind: TIME_INTERVAL_KIND,
      label: 'time interval',
      decode: decodeWith(StoredTimeInterval),
      sync: { intervalMs: deps.syncIntervalMs, log: this.log, reload: () => this.refresh() },
    });
  }

  get current(): IntervalIndex {
    return this.snapshot;
  }

  start(): Promise<void> {
    return this.records.start();
  }

  close(): Promise<void> {
    return this.records.close();
  }

  /** 409 when the scope already has an interval of this name. */
  async create(input: TimeIntervalCreateInput, createdBy: string): Promise<TimeInterval> {
    const at = isoString(this.deps.clock.now());
    const interval: StoredTimeInterval = {
      id: input.name,
      name: input.name,
      namespace: input.namespace,
      tenant: input.tenant,
      location: input.location,
      time_ranges: input.time_ranges,
      ...(input.description !== undefined ? { description: input.description } : {}),
      created_by: createdBy,
      created_at: at,
      updated_at: at,
    };
    if ((await this.records.create(interval)) !== 'created') throw errors.conflict(`time interval already exists: ${input.name}`);
    return this.view(interval);
  }

  get(scope: TimeIntervalScopeQuery, name: string): TimeInterval {
    return this.view(this.stored(scope, name));
  }

  stored(scope: TimeIntervalScopeQuery, name: string): StoredTimeInterval {
    const found = this.snapshot.get(scope.namespace, scope.tenant, name);
    if (!found) throw errors.notFound('time interval', describeScope(scope, name));
    return found.interval;
  }

  /** Exact namespace and tenant filters; oldest first. */
  list(opts: TimeIntervalListOptions): { time_intervals: TimeInterval[]; count: number } {
    const time_intervals = this.snapshot.all
      .filter(
        (i) => (opts.namespace === undefined || i.namespace === opts.namespace) && (opts.tenant === undefined || i.tenant === opts.tenant) && opts.visible(i),
      )
      .map((i) => this.view(i));
    return { time_intervals, count: time_intervals.length };
  }

  async update(scope: TimeIntervalScopeQuery, name: string, patch: TimeIntervalUpdateInput): Promise<TimeInterval> {
    const updated_at = isoString(this.deps.clock.now());
    const next = await this.records.update({ ...scope, id: name }, (stored) => {
      const { description: old, ...rest } = stored;
      const description = patch.description === undefined ? old : (patch.description ?? undefined);
      return {
        ...rest,
        ...(patch.time_ranges !== undefined ? { time_ranges: patch.time_ranges } : {}),
        ...(patch.location !== undefined ? { location: patch.location } : {}),
        ...(description !== undefined ? { description } : {}),
        updated_at,
      };
    });
    if (!next) throw errors.notFound('time interval', describeScope(scope, name));
    return this.view(next.record);
  }

  async remove(scope: TimeIntervalScopeQuery, name: string): Promise<void> {
    if (!(await this.records.remove({ ...scope, id: name }))) throw errors.notFound('time interval', describeScope(scope, name));
  }

  private view(stored: StoredTimeInterval): TimeInterval {
    const { id: _name, ...fields } = stored;
    const compiled = this.snapshot.get(stored.namespace, stored.tenant, stored.name);
    const schedule = compiled?.interval === stored ? compiled.schedule : compileSchedule(stored);
    return { ...fields, matches_now: schedule.isActive(this.deps.clock.now()) };
  }

  private async refresh(): Promise<void> {
    const { records, bad } = await this.records.listAll();
    for (const ref of bad) this.log.error({ interval: ref.id, namespace: ref.namespace, tenant: ref.tenant }, 'stored time interval is unreadable; skipped');
    this.snapshot = new IntervalIndex(
      records.map((r) => r.record),
      (i, err) => this.log.error({ interval: i.name, namespace: i.namespace, tenant: i.tenant, err }, 'stored time interval does not compile; not applied'),
    );
  }
}
