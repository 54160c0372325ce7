import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The counters the spec's JSON /health and /metrics bodies show (per process). */
export const OUTCOME_COUNTERS = [
  'dispatched',
  'executed',
  'deduplicated',
  'suppressed',
  'rerouted',
  'throttled',
  'failed',
  'grouped',
  'pending_approval',
] as const;

export type CounterName = (typeof OUTCOME_COUNTERS)[number];
export type CounterSnapshot = Record<CounterName, number>;

/** The retention reaper's counters, under the reference's JSON names (per process: the reaper runs on workers). */
export interface RetentionCounts {
  retention_deleted_state: number;
  retention_skipped_compliance: number;
  retention_errors: number;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Label sets cached per metric family; past this many, calls go through prom-client uncached. */
const MAX_CACHED_LABEL_SETS = 1000;

/**
 * The labelled children of the per-request metrics, built once per label set: prom-client builds
 * and checks a label object (and, for histograms, a closure) on every call with an object.
 */
class LabelledChildren<T> {
  private readonly children = new Map<string, T>();

  constructor(private readonly make: (key: string) => T) {}

  get(key: string): T {
    let child = this.children.get(key);
    if (child === undefined) {
      child = this.make(key);
      if (this.children.size < MAX_CACHED_LABEL_SETS) this.children.set(key, child);
    }
    return child;
  }
}

/**
 * All Prometheus metrics of one process, on a registry of its own (several apps can live in one
 * test process). Label sets are small and fixed; nothing here is built per request.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly counts: CounterSnapshot = Object.fromEntries(OUTCOME_COUNTERS.map((n) => [n, 0])) as CounterSnapshot;

  readonly actions = new Counter({
    name: 'sluice_actions_total',
    help: 'Dispatched actions by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly dispatchDuration = new Histogram({
    name: 'sluice_dispatch_duration_seconds',
    help: 'Time to decide and execute one action',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly providerRequests = new Counter({
    name: 'sluice_provider_requests_total',
    help: 'Provider attempts by provider and result',
    labelNames: ['provider', 'result'] as const,
    registers: [this.registry],
  });
  readonly providerDuration = new Histogram({
    name: 'sluice_provider_request_duration_seconds',
    help: 'Provider attempt latency',
    labelNames: ['provider'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: 'sluice_http_requests_total',
    help: 'HTTP requests by route and status class',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'sluice_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly jobs = new Counter({
    name: 'sluice_jobs_total',
    help: 'Background jobs run by kind and result',
    labelNames: ['kind', 'result'] as const,
    registers: [this.registry],
  });
  readonly jobDuration = new Histogram({
    name: 'sluice_job_duration_seconds',
    help: 'Background job run time',
    labelNames: ['kind'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly ruleErrors = new Counter({
    name: 'sluice_rule_errors_total',
    help: 'Rule conditions that failed to evaluate (treated as not matching)',
    labelNames: ['rule'] as const,
    registers: [this.registry],
  });
  readonly quotaExceeded = new Counter({
    name: 'sluice_quota_exceeded_total',
    help: 'Actions over their quota: blocked (behavior=block) or executed anyway (behavior=warn)',
    labelNames: ['policy', 'behavior'] as const,
    registers: [this.registry],
  });
  readonly internalEvents = new Counter({
    name: 'sluice_internal_events_total',
    help: 'Events reported by background work (group_flushed, timeout, recurring_fired, ...)',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly groupFlushes = new Counter({
    name: 'sluice_group_flushes_total',
    help: 'Group flushes: sent (notification accepted), failed (abandoned), resolved (idle group closed without one)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly groupEventsDropped = new Counter({
    name: 'sluice_group_events_dropped_total',
    help: 'Grouped events dropped, oldest first, because their group reached max_group_size',
    registers: [this.registry],
  });
  readonly auditWriteFailures = new Counter({
    name: 'sluice_audit_write_failures_total',
    help: 'Audit records that could not be written (the dispatch failed with them only in synchronous-write compliance modes)',
    registers: [this.registry],
  });
  readonly auditEvicted = new Counter({
    name: 'sluice_audit_evicted_total',
    help: 'Memory backend: audit records evicted because audit.memory_max_records was reached',
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'sluice_rate_limited_total',
    help: 'Requests refused with 429 by the request rate limits, by the limit that refused them',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });
  readonly stateErrors = new Counter({
    name: 'sluice_state_errors_total',
    help: 'Failed state backend (Redis) operations',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  readonly deferredQueueLength = new Gauge({
    name: 'sluice_deferred_queue_length',
    help: 'Entries of deferred writes (audit indexes and rollups, one per audited dispatch) queued in Redis and not yet applied, as this process last saw it (0 on the memory backend)',
    registers: [this.registry],
  });
  readonly deferredWritesFailed = new Counter({
    name: 'sluice_deferred_writes_failed_total',
    help: 'Deferred writes this process failed to apply (a key of the wrong type or an unreadable queue entry)',
    registers: [this.registry],
  });
  readonly retentionDeleted = new Counter({
    name: 'sluice_retention_deleted_state_total',
    help: 'Records deleted by the retention reaper, by source (audit, chains, events, ...)',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly retentionSkippedCompliance = new Counter({
    name: 'sluice_retention_skipped_compliance_total',
    help: 'Retention reaper skips because of a compliance hold (source=policies: whole policies)',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly retentionErrors = new Counter({
    name: 'sluice_retention_errors_total',
    help: 'Retention reaper failures, by source (source=policies: the policy reload)',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  private readonly retention: RetentionCounts = { retention_deleted_state: 0, retention_skipped_compliance: 0, retention_errors: 0 };
  private readonly byOutcome = new LabelledChildren((outcome) => ({
    count: this.actions.labels(outcome),
    duration: this.dispatchDuration.labels(outcome),
  }));
  private readonly byProvider = new LabelledChildren((provider) => ({
    success: this.providerRequests.labels(provider, 'success'),
    failure: this.providerRequests.labels(provider, 'failure'),
    duration: this.providerDuration.labels(provider),
  }));
  /** Keyed by `method route status`; recordHttpRequest skips the cache when a part holds a space. */
  private readonly byHttpRequest = new LabelledChildren((key) => {
    const [method = '', route = '', status = ''] = key.split(' ');
    return { count: this.httpRequests.labels(method, route, status), duration: this.httpDuration.labels(method, route) };
  });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'sluice_' });
  }

  /** Counts one finished dispatch. `outcome` is the wire name (executed, dry_run, ...). */
  recordDispatch(outcome: string, seconds: number): void {
    this.counts.dispatched += 1;
    if (outcome in this.counts) this.counts[outcome as CounterName] += 1;
    const children = this.byOutcome.get(outcome);
    children.count.inc();
    children.duration.observe(seconds);
  }

  /** Implements the providers lib's ProviderMetricsSink. */
  observe(provider: string, result: 'success' | 'failure', durationMs: number): void {
    const children = this.byProvider.get(provider);
    (result === 'success' ? children.success : children.failure).inc();
    children.duration.observe(durationMs / 1000);
  }

  /** Counts one HTTP request (`sluice_http_requests_total` and its duration histogram). */
  recordHttpRequest(method: string, route: string, status: number, seconds: number): void {
    if (method.includes(' ') || route.includes(' ')) {
      // Not a key of the cache (spaces separate its parts); never seen from Fastify.
      this.httpRequests.inc({ method, route, status: String(status) });
      this.httpDuration.observe({ method, route }, seconds);
      return;
    }
    const children = this.byHttpRequest.get(`${method} ${route} ${status}`);
    children.count.inc();
    children.duration.observe(seconds);
  }

  snapshot(): CounterSnapshot {
    return { ...this.counts };
  }

  /** Counts what one retention source did in one reaper cycle (implements the gateway's RetentionMetrics). */
  recordRetention(source: string, counts: { deleted: number; skippedCompliance: number; errors: number }): void {
    this.retentionDeleted.inc({ source }, counts.deleted);
    this.retentionSkippedCompliance.inc({ source }, counts.skippedCompliance);
    this.retentionErrors.inc({ source }, counts.errors);
    this.retention.retention_deleted_state += counts.deleted;
    this.retention.retention_skipped_compliance += counts.skippedCompliance;
    this.retention.retention_errors += counts.errors;
  }

  /** The retention counters as plain numbers, kept apart from snapshot(): /health's body is fixed by the spec. */
  retentionSnapshot(): RetentionCounts {
    return { ...this.retention };
  }

  prometheusText(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
