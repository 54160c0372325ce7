import { setTimeout as sleep } from 'node:timers/promises';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { LabelledChildren } from './labelled-children.js';
import { createMetricFields, type MetricFields } from './metric-table.js';

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

type CounterName = (typeof OUTCOME_COUNTERS)[number];
type CounterSnapshot = Record<CounterName, number>;

/** The spec's embedding counters, in /health and the JSON /metrics when an embedding provider is configured. */
export const EMBEDDING_COUNTERS = ['topic_cache_hits', 'topic_cache_misses', 'text_cache_hits', 'text_cache_misses', 'errors', 'fail_open_count'] as const;
export type EmbeddingCounter = (typeof EMBEDDING_COUNTERS)[number];

/** The retention reaper's counters, under the reference's JSON names (per process: the reaper runs on workers). */
interface RetentionCounts {
  retention_deleted_state: number;
  retention_skipped_compliance: number;
  retention_errors: number;
}

/**
 * All Prometheus metrics of one process, on a registry of its own (several apps can live in one
 * test process). Each row of METRICS (metric-table.ts) is a field of the same name; label sets
 * are small and fixed, and nothing here is built per request.
 */
// The table's fields: declared by this interface merged into the class, assigned in its constructor.
export interface Metrics extends MetricFields {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the merge is how the table's rows become typed fields; the constructor assigns every one of them.
export class Metrics {
  readonly registry = new Registry();
  private readonly counts: CounterSnapshot = Object.fromEntries(OUTCOME_COUNTERS.map((n) => [n, 0])) as CounterSnapshot;
  /** Null until an embedding provider is configured (the spec adds the object only then). */
  private embeddingCounts: Record<EmbeddingCounter, number> | null = null;
  private readonly retention: RetentionCounts = { retention_deleted_state: 0, retention_skipped_compliance: 0, retention_errors: 0 };
  /** Read at each scrape: the memory backend's stored bytes by kind (null on Redis). */
  private memoryStore: (() => ReadonlyMap<string, number>) | null = null;
  private queueCounts: (() => Promise<readonly { queue: string; state: string; count: number }[]>) | null = null;
  private readonly scrapeReads: (() => Promise<unknown>)[] = [];
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
    Object.assign(this, createMetricFields(this.registry));
    if (opts.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, prefix: 'sluice_' });
      // Gauges named like counters, which Prometheus's lint (promtool check metrics) refuses; the
      // same counts by type stay, as sluice_nodejs_active_handles and its siblings.
      for (const what of ['handles', 'requests', 'resources']) this.registry.removeSingleMetric(`sluice_nodejs_active_${what}_total`);
    }
  }

  /**
   * Counts one finished dispatch. `outcome` is the wire name (executed, dry_run, ...). A dry run
   * has its own outcome series but is not `dispatched`: nothing was (docs/dispatch.md).
   */
  recordDispatch(outcome: string, seconds: number): void {
    if (outcome !== 'dry_run') this.counts.dispatched += 1;
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

  snapshot(): CounterSnapshot & { embedding?: Record<EmbeddingCounter, number> } {
    return this.embeddingCounts ? { ...this.counts, embedding: { ...this.embeddingCounts } } : { ...this.counts };
  }

  /** Called once an embedding provider is configured: /health and the JSON /metrics then carry its counters. */
  trackEmbeddings(): void {
    this.embeddingCounts ??= Object.fromEntries(EMBEDDING_COUNTERS.map((n) => [n, 0])) as Record<EmbeddingCounter, number>;
  }

  /** One embedding event: the JSON counter and sluice_embedding_total{counter}. */
  countEmbedding(counter: EmbeddingCounter): void {
    this.trackEmbeddings();
    (this.embeddingCounts as Record<EmbeddingCounter, number>)[counter] += 1;
    this.embedding.inc({ counter });
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

  /** The memory backend's byte counts, read at each scrape into `sluice_memory_store_bytes{kind}`. */
  trackMemoryStore(bytesByKind: () => ReadonlyMap<string, number>): void {
    this.memoryStore = bytesByKind;
  }

  /**
   * Reads that refresh gauges from shared state at each scrape (a circuit breaker's state, which
   * another replica may have changed since this one last looked). A read that fails or takes
   * over a second leaves its gauges as they were.
   */
  refreshOnScrape(read: () => Promise<unknown>): void {
    this.scrapeReads.push(read);
  }

  /** The scheduler's job counts, read at each scrape into `sluice_queue_jobs{queue,state}`. */
  trackQueues(counts: () => Promise<readonly { queue: string; state: string; count: number }[]>): void {
    this.queueCounts = counts;
  }

  async prometheusText(): Promise<string> {
    // Redis away or stalled: the scrape answers within SCRAPE_READ_WAIT_MS, without the queue
    // series (a stale depth would mislead), rather than after a command timeout, past many
    // scrapers' own. Every read shares that one deadline.
    const queues =
      this.queueCounts === null
        ? null
        : orAfterDeadline(
            this.queueCounts().catch(() => []),
            [],
          );
    await Promise.all(
      this.scrapeReads.map((read) =>
        orAfterDeadline(
          read().catch(() => undefined),
          undefined,
        ),
      ),
    );
    if (this.memoryStore !== null) {
      this.memoryStoreBytes.reset();
      for (const [kind, bytes] of this.memoryStore()) this.memoryStoreBytes.set({ kind }, bytes);
    }
    if (queues !== null) {
      const counts = await queues;
      this.queueJobs.reset();
      for (const { queue, state, count } of counts) this.queueJobs.set({ queue, state }, count);
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** How long a scrape waits for the queues' counts and for the reads of refreshOnScrape. */
const SCRAPE_READ_WAIT_MS = 1000;

/** What `promise` gives, or `fallback` once SCRAPE_READ_WAIT_MS have passed (a timer that holds no process open). */
function orAfterDeadline<T>(promise: Promise<T>, fallback: T): Promise<T> {
  return Promise.race([promise, sleep(SCRAPE_READ_WAIT_MS, fallback, { ref: false })]);
}
