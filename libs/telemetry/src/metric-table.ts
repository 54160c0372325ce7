import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** One row of the metric table: everything prom-client needs, apart from the registry. */
export interface MetricSpec {
  type: 'counter' | 'gauge' | 'histogram';
  name: string;
  help: string;
  labelNames?: readonly string[];
}

/**
 * Histogram buckets (seconds) shared by every latency histogram. They reach past 30 s because a
 * dispatch with the defaults can take four 30 s attempts (three retries) and their backoff; an attempt that hits
 * its 30 s timeout lands above 30.
 */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * Every Prometheus metric of a process, keyed by the Metrics field that holds it: adding a row
 * adds the field. Operators find them in docs/operations.md and the feature pages.
 */
export const METRICS = {
  actions: { type: 'counter', name: 'sluice_actions_total', help: 'Dispatched actions by outcome', labelNames: ['outcome'] },
  dispatchDuration: { type: 'histogram', name: 'sluice_dispatch_duration_seconds', help: 'Time to decide and execute one action', labelNames: ['outcome'] },
  providerRequests: {
    type: 'counter',
    name: 'sluice_provider_requests_total',
    help: 'Provider attempts by provider and result',
    labelNames: ['provider', 'result'],
  },
  providerDuration: { type: 'histogram', name: 'sluice_provider_request_duration_seconds', help: 'Provider attempt latency', labelNames: ['provider'] },
  httpRequests: {
    type: 'counter',
    name: 'sluice_http_requests_total',
    help: 'HTTP requests by route and status code',
    labelNames: ['method', 'route', 'status'],
  },
  httpDuration: { type: 'histogram', name: 'sluice_http_request_duration_seconds', help: 'HTTP request latency by route', labelNames: ['method', 'route'] },
  stateReplicationShort: {
    type: 'counter',
    name: 'sluice_state_replication_short_total',
    help: 'Writes answered before state.wait_replicas replicas had them (the WAIT timed out)',
  },
  jobs: { type: 'counter', name: 'sluice_jobs_total', help: 'Background jobs run by kind and result', labelNames: ['kind', 'result'] },
  jobDuration: { type: 'histogram', name: 'sluice_job_duration_seconds', help: 'Background job run time', labelNames: ['kind'] },
  ruleErrors: {
    type: 'counter',
    name: 'sluice_rule_errors_total',
    help: 'Rule conditions that failed to evaluate (treated as not matching)',
    labelNames: ['rule'],
  },
  quotaExceeded: {
    type: 'counter',
    name: 'sluice_quota_exceeded_total',
    help: 'Actions over their quota: blocked (behavior=block) or executed anyway (behavior=warn)',
    labelNames: ['policy', 'behavior'],
  },
  circuitBreakerState: {
    type: 'gauge',
    name: 'sluice_circuit_breaker_state',
    help: 'Provider circuit breaker state, shared by all replicas and read again at each scrape: 0 closed, 1 open, 2 half-open',
    labelNames: ['provider'],
  },
  streamConnections: {
    type: 'gauge',
    name: 'sluice_stream_connections',
    help: 'Open SSE stream connections on this process',
  },
  embedding: {
    type: 'counter',
    name: 'sluice_embedding_total',
    help: 'Embedding service events: topic/text cache hits and misses, errors, fail-open similarities',
    labelNames: ['counter'],
  },
  pluginTimeouts: {
    type: 'counter',
    name: 'sluice_plugin_timeouts_total',
    help: 'WASM plugin calls stopped at wasm.cpu_limit_ms (their thread replaced; the condition did not match)',
    labelNames: ['plugin'],
  },
  deadLetters: { type: 'counter', name: 'sluice_dead_letters_total', help: 'Failed actions queued in the dead-letter queue' },
  deadLettersDropped: {
    type: 'counter',
    name: 'sluice_dead_letters_dropped_total',
    help: 'Failed actions not queued because their tenant’s dead-letter queue was full',
  },
  internalEvents: {
    type: 'counter',
    name: 'sluice_internal_events_total',
    help: 'Events reported by background work (group_flushed, timeout, recurring_fired, ...)',
    labelNames: ['type'],
  },
  groupFlushes: {
    type: 'counter',
    name: 'sluice_group_flushes_total',
    help: 'Group flushes: sent (notification accepted), failed (abandoned), resolved (idle group closed without one)',
    labelNames: ['result'],
  },
  groupEventsDropped: {
    type: 'counter',
    name: 'sluice_group_events_dropped_total',
    help: 'Grouped events dropped, oldest first, because their group reached max_group_size',
  },
  auditWriteFailures: {
    type: 'counter',
    name: 'sluice_audit_write_failures_total',
    help: 'Audit records that could not be written (the dispatch failed with them only in synchronous-write compliance modes)',
  },
  auditSpooled: {
    type: 'gauge',
    name: 'sluice_audit_spooled_records',
    help: 'Audit records held in this process because the state backend did not answer; written when it does',
  },
  auditSpoolDropped: {
    type: 'counter',
    name: 'sluice_audit_spool_dropped_total',
    help: 'Spooled audit records dropped (oldest first) because audit.spool_max_records was reached',
  },
  auditEvicted: {
    type: 'counter',
    name: 'sluice_audit_evicted_total',
    help: 'Memory backend: audit records evicted because audit.memory_max_records or audit.memory_max_bytes was reached',
  },
  memoryStoreBytes: {
    type: 'gauge',
    name: 'sluice_memory_store_bytes',
    help: 'Memory backend: characters of the values the in-process state holds, by key kind (audit: the audit records, capped by audit.memory_max_bytes)',
    labelNames: ['kind'],
  },
  queueJobs: {
    type: 'gauge',
    name: 'sluice_queue_jobs',
    help: 'Background jobs of the kinds this process consumes, by queue (job kind) and state (waiting, active, delayed); read at each scrape',
    labelNames: ['queue', 'state'],
  },
  rateLimited: {
    type: 'counter',
    name: 'sluice_rate_limited_total',
    help: 'Requests refused with 429 by the request rate limits, by the limit that refused them',
    labelNames: ['scope'],
  },
  stateErrors: {
    type: 'counter',
    name: 'sluice_state_errors_total',
    help: 'Requests (operation=request) and jobs (operation=job) that failed because the state backend was away, stalled, full or refusing writes',
    labelNames: ['operation'],
  },
  stateBackendUp: {
    type: 'gauge',
    name: 'sluice_state_backend_up',
    help: 'Whether the state backend answered a PING at the last scrape (1) or not within 0.9 s (0): set even while no request arrives',
  },
  auditIngestBacklog: {
    type: 'gauge',
    name: 'sluice_audit_ingest_backlog',
    help: 'Audit records stored and not yet indexed (their list queries, analytics and coverage wait for them), as this process last saw it',
  },
  auditIndexed: { type: 'counter', name: 'sluice_audit_indexed_total', help: 'Audit records this process indexed (bulk index entries and rollups)' },
  auditIndexWritesFailed: {
    type: 'counter',
    name: 'sluice_audit_index_writes_failed_total',
    help: 'Index or rollup writes this process failed to apply (a key of the wrong type), or records given up on after repeated failures',
  },
  retentionDeleted: {
    type: 'counter',
    name: 'sluice_retention_deleted_state_total',
    help: 'Records deleted by the retention reaper, by source (audit, chains, events, ...)',
    labelNames: ['source'],
  },
  retentionSkippedCompliance: {
    type: 'counter',
    name: 'sluice_retention_skipped_compliance_total',
    help: 'Retention reaper skips because of a compliance hold (source=policies: whole policies)',
    labelNames: ['source'],
  },
  retentionErrors: {
    type: 'counter',
    name: 'sluice_retention_errors_total',
    help: 'Retention reaper failures, by source (source=policies: the policy reload)',
    labelNames: ['source'],
  },
} as const satisfies Record<string, MetricSpec>;

type LabelsOf<S extends MetricSpec> = S extends { labelNames: readonly (infer L extends string)[] } ? L : string;
type MetricOf<S extends MetricSpec> = S['type'] extends 'counter'
  ? Counter<LabelsOf<S>>
  : S['type'] extends 'gauge'
    ? Gauge<LabelsOf<S>>
    : Histogram<LabelsOf<S>>;

/** The prom-client object of each row, typed with the row's label names. */
export type MetricFields = { readonly [K in keyof typeof METRICS]: MetricOf<(typeof METRICS)[K]> };

function createMetric(spec: MetricSpec, registry: Registry): Counter | Gauge | Histogram {
  const config = { name: spec.name, help: spec.help, labelNames: spec.labelNames ?? [], registers: [registry] };
  switch (spec.type) {
    case 'counter':
      return new Counter(config);
    case 'gauge':
      return new Gauge(config);
    case 'histogram':
      return new Histogram({ ...config, buckets: LATENCY_BUCKETS });
  }
}

/** Creates every metric of the table on `registry`. */
export function createMetricFields(registry: Registry): MetricFields {
  const fields = Object.fromEntries(Object.entries(METRICS).map(([field, spec]) => [field, createMetric(spec, registry)]));
  // Object.fromEntries forgets which field holds which kind; createMetric follows each row's type.
  return fields as MetricFields;
}
