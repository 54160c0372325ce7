import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

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

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'sluice_' });
  }

  /** Counts one finished dispatch. `outcome` is the wire name (executed, dry_run, ...). */
  recordDispatch(outcome: string, seconds: number): void {
    this.counts.dispatched += 1;
    if (outcome in this.counts) this.counts[outcome as CounterName] += 1;
    this.actions.inc({ outcome });
    this.dispatchDuration.observe({ outcome }, seconds);
  }

  /** Implements the providers lib's ProviderMetricsSink. */
  observe(provider: string, result: 'success' | 'failure', durationMs: number): void {
    this.providerRequests.inc({ provider, result });
    this.providerDuration.observe({ provider }, durationMs / 1000);
  }

  snapshot(): CounterSnapshot {
    return { ...this.counts };
  }

  prometheusText(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
