import { systemClock, type Clock, type TimerHandle } from '@sluice/core';
import { GLOBAL_SCOPE, type StateKey, type StateStore, type WriteOp } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { LATENCY_BOUNDS_MS, bucketOf, quantile } from './latency-histogram.js';

/** The key kind of the per-minute health counters: never rename without a migration. */
const HEALTH_KIND = 'provider-health';
const MINUTE_MS = 60_000;
/** Minute buckets a report adds up: the current one and the four before it. */
const WINDOW_MINUTES = 5;
const BUCKET_FIELDS = Array.from({ length: LATENCY_BOUNDS_MS.length + 1 }, (_, i) => `b${i}`);
const FIELDS = ['total', 'ok', 'fail', 'sum_ms', ...BUCKET_FIELDS] as const;

/** One provider's calls since the last flush. */
interface Tally {
  counts: Map<string, number>;
}

export interface ProviderStats {
  provider: string;
  total_requests: number;
  successes: number;
  failures: number;
  success_rate: number;
  avg_latency_ms: number;
  p50_latency_ms: number;
  p95_latency_ms: number;
  p99_latency_ms: number;
}

export interface ProviderHealthDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** How often this process adds what it counted to the shared minute buckets. */
  flushIntervalMs: number;
}

/**
 * Provider call statistics over a sliding window, across every replica: each process counts its
 * provider attempts in memory (nothing on the call path but a map update) and adds them every
 * `flushIntervalMs` to per-minute counters in the state store (total, successes, failures,
 * latency sum, latency histogram buckets), which expire after the window. A report sums the
 * window's minutes from every replica; its percentiles come from the merged histogram.
 */
export class ProviderHealth {
  private pending = new Map<string, Tally>();
  private timer: TimerHandle | null = null;
  private readonly log: Logger;

  constructor(private readonly deps: ProviderHealthDeps) {
    this.log = deps.logger.child({ component: 'provider-health' });
  }

  start(): void {
    // Flushing is housekeeping of this process: real time, even when a test drives the gateway's clock
    // (a clock jumped months ahead would otherwise run it once per second skipped).
    this.timer ??= systemClock.setRepeating(() => {
      this.flush().catch((err: unknown) => this.log.warn({ err }, 'provider health flush failed; its counts are dropped'));
    }, this.deps.flushIntervalMs);
  }

  async close(): Promise<void> {
    this.timer?.cancel();
    this.timer = null;
    await this.flush().catch((err: unknown) => this.log.warn({ err }, 'provider health flush failed at shutdown'));
  }

  /** One provider attempt (the executor's metrics sink). */
  observe(provider: string, result: 'success' | 'failure', durationMs: number): void {
    let tally = this.pending.get(provider);
    if (!tally) {
      tally = { counts: new Map() };
      this.pending.set(provider, tally);
    }
    const add = (field: string, n: number) => tally.counts.set(field, (tally.counts.get(field) ?? 0) + n);
    add('total', 1);
    add(result === 'success' ? 'ok' : 'fail', 1);
    add('sum_ms', Math.round(durationMs));
    add(`b${bucketOf(durationMs)}`, 1);
  }

  /** Adds what this process counted to the current minute's shared counters. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const minute = Math.floor(this.deps.clock.now() / MINUTE_MS);
    const ttlMs = (WINDOW_MINUTES + 1) * MINUTE_MS;
    const ops: WriteOp[] = [];
    for (const [provider, tally] of batch) {
      for (const [field, by] of tally.counts) ops.push({ op: 'increment', key: keyOf(provider, minute, field), by, ttlMs });
    }
    await this.deps.state.writeBatch(ops);
  }

  /** Each provider's statistics over the window, every replica's flushed counts included (this one's flushed first). */
  async report(providers: readonly string[]): Promise<ProviderStats[]> {
    await this.flush();
    const now = Math.floor(this.deps.clock.now() / MINUTE_MS);
    const minutes = Array.from({ length: WINDOW_MINUTES }, (_, i) => now - i);
    const keys = providers.flatMap((p) => minutes.flatMap((m) => FIELDS.map((f) => keyOf(p, m, f))));
    const values = keys.length === 0 ? [] : await this.deps.state.getMany(keys);
    const perProvider = minutes.length * FIELDS.length;
    return providers.map((provider, pi) => {
      const sums = new Map<string, number>();
      for (let k = 0; k < perProvider; k++) {
        const field = FIELDS[k % FIELDS.length] as string;
        sums.set(field, (sums.get(field) ?? 0) + Number(values[pi * perProvider + k] ?? 0));
      }
      return statsOf(provider, sums);
    });
  }
}

function statsOf(provider: string, sums: ReadonlyMap<string, number>): ProviderStats {
  const total = sums.get('total') ?? 0;
  const successes = sums.get('ok') ?? 0;
  const histogram = BUCKET_FIELDS.map((f) => sums.get(f) ?? 0);
  return {
    provider,
    total_requests: total,
    successes,
    failures: sums.get('fail') ?? 0,
    success_rate: total === 0 ? 100 : Math.round((successes / total) * 10_000) / 100,
    avg_latency_ms: total === 0 ? 0 : Math.round(((sums.get('sum_ms') ?? 0) / total) * 10) / 10,
    p50_latency_ms: quantile(histogram, 0.5),
    p95_latency_ms: quantile(histogram, 0.95),
    p99_latency_ms: quantile(histogram, 0.99),
  };
}

function keyOf(provider: string, minute: number, field: string): StateKey {
  return { kind: HEALTH_KIND, ...GLOBAL_SCOPE, id: `${provider}:${minute}:${field}` };
}
