/** The performance targets of issue 7 and of silences' hot path, checked against one run's results. */
import type { AuditHeapResult } from './audit-heap.js';
import type { ScenarioResult } from './scenario-result.js';
import type { SoakResult } from './soak.js';
import type { ScenarioId } from './scenarios.js';

type TargetStatus = 'PASS' | 'MISS' | 'N/A';

export interface TargetCheck {
  target: string;
  measured: string;
  status: TargetStatus;
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

export function checkTargets(results: readonly ScenarioResult[], soaks: readonly SoakResult[] = [], auditHeap: AuditHeapResult | null = null): TargetCheck[] {
  const by = new Map<ScenarioId, ScenarioResult>(results.map((r) => [r.id, r]));
  const checks: TargetCheck[] = [];
  const add = (target: string, value: number | undefined, limit: number, kind: 'min' | 'max', show: (v: number) => string) => {
    if (value === undefined || !Number.isFinite(value)) return checks.push({ target, measured: 'not measured', status: 'N/A' });
    const ok = kind === 'min' ? value >= limit : value <= limit;
    checks.push({ target, measured: show(value), status: ok ? 'PASS' : 'MISS' });
  };
  const ratio = (x: ScenarioId, y: ScenarioId) => {
    const a = by.get(x);
    const b = by.get(y);
    return a && b && b.reqPerSec > 0 ? a.reqPerSec / b.reqPerSec : undefined;
  };
  const a = by.get('a');
  const b = by.get('b');
  const c = by.get('c');
  const e = by.get('e');
  const f = by.get('f');
  const i = by.get('i');
  const j = by.get('j');

  add('(b) ≥ 0.6× baseline', ratio('b', 'a'), 0.6, 'min', (v) => `${fmt(v)}× (${fmt(b?.reqPerSec ?? NaN, 0)} / ${fmt(a?.reqPerSec ?? NaN, 0)} req/s)`);
  add('(e) ≥ 0.35× baseline', ratio('e', 'a'), 0.35, 'min', (v) => `${fmt(v)}× (${fmt(e?.reqPerSec ?? NaN, 0)} / ${fmt(a?.reqPerSec ?? NaN, 0)} req/s)`);
  add('(c) ≥ 0.85× (b)', ratio('c', 'b'), 0.85, 'min', (v) => `${fmt(v)}× (${fmt(c?.reqPerSec ?? NaN, 0)} / ${fmt(b?.reqPerSec ?? NaN, 0)} req/s)`);
  const pg = by.get('p');
  add(
    '(p) audit trail in PostgreSQL ≥ 0.9× (e)',
    ratio('p', 'e'),
    0.9,
    'min',
    (v) => `${fmt(v)}× (${fmt(pg?.reqPerSec ?? NaN, 0)} / ${fmt(e?.reqPerSec ?? NaN, 0)} req/s)`,
  );
  const k = by.get('k');
  add(
    '(k) tracing on ≥ 0.85× (b)',
    ratio('k', 'b'),
    0.85,
    'min',
    (v) => `${fmt(v)}× (${fmt(k?.reqPerSec ?? NaN, 0)} / ${fmt(b?.reqPerSec ?? NaN, 0)} req/s)${tracingCostShown(by)}`,
  );
  add(
    '(j) ≥ 0.9× (i): 1,020 silences, 20 in scope, within 10 % of none',
    ratio('j', 'i'),
    0.9,
    'min',
    (v) =>
      `${fmt(v)}× (${fmt(j?.reqPerSec ?? NaN, 0)} / ${fmt(i?.reqPerSec ?? NaN, 0)} req/s; CPU ${fmt(j?.cpuMsPerRequest ?? NaN, 3)} / ${fmt(i?.cpuMsPerRequest ?? NaN, 3)} ms/req)`,
  );
  add('p99 ≤ 10 ms at 50 connections in (b)', b?.latencyMs.p99, 10, 'max', (v) => `${fmt(v)} ms`);
  add('p99 ≤ 10 ms at 50 connections in (e)', e?.latencyMs.p99, 10, 'max', (v) => `${fmt(v)} ms`);
  const openP99 = (r: ScenarioResult | undefined) => r?.openLoop?.latency.p99;
  const openShown = (r: ScenarioResult | undefined) => (v: number) =>
    `${fmt(v)} ms (p50 ${fmt(r?.openLoop?.latency.p50 ?? NaN)}, at ${r?.openLoop?.offeredPerSec ?? '?'} req/s)`;
  add('p99 ≤ 5 ms at an open loop of half its throughput, (b)', openP99(b), 5, 'max', openShown(b));
  add('p99 ≤ 5 ms at an open loop of half its throughput, (e)', openP99(e), 5, 'max', openShown(e));
  add('≤ 2 Redis round trips per plain dispatch in (e)', e?.redis?.probe?.roundTripsPerDispatch, 2, 'max', (v) => fmt(v));
  add('≤ 6 Redis commands per plain dispatch in (e)', e?.redis?.commandsPerDispatch, 6, 'max', (v) => {
    const sent = e?.redis?.probe?.clientCommandsPerDispatch;
    return `${fmt(v, 1)} executed${sent === undefined ? '' : `, ${fmt(sent, 1)} sent by the client`}`;
  });
  // Issue 22: on a 3-primary Redis Cluster, the busiest primary should carry about a third of the Redis CPU.
  const shares = by.get('r')?.redis?.primaryCpuMsPerDispatch;
  const sum = shares?.reduce((x, y) => x + y, 0) ?? 0;
  add(
    '(r) Redis Cluster: the busiest of 3 primaries ≤ 40 % of the Redis CPU',
    shares && sum > 0 ? Math.max(...shares) / sum : undefined,
    0.4,
    'max',
    (v) => `${fmt(v * 100, 0)} % (${shares?.map((x) => fmt(x * 1000, 0)).join(' / ')} µs per dispatch; ${fmt(sum * 1000, 0)} µs in all)`,
  );
  // The baselines (a, x, l) are not Sluice. Tracing on (k) loads the OpenTelemetry SDK, and (r) holds a Cluster client's
  // connection per node: their idle RSS is reported in the details, not held to the default's budget.
  const notHeld = new Set(['a', 'x', 'k', 'l', 'r']);
  const idle = results.filter((r) => !notHeld.has(r.id)).map((r) => r.idleRssMb);
  add('idle API RSS ≤ 120 MB', idle.length ? Math.max(...idle) : undefined, 120, 'max', (v) => `${fmt(v, 0)} MB (largest over scenarios b–j)`);
  const dedup = f?.redis?.dedupMemory;
  add(
    'Redis memory per live dedup key ≤ 200 bytes',
    dedup?.bytesPerKey,
    200,
    'max',
    (v) =>
      `${fmt(v, 0)} bytes (${dedup?.liveKeys ?? 0} keys; ${fmt(dedup?.bytesPerKeyByDelete ?? NaN, 0)} without hash-table buckets, MEMORY USAGE ${fmt(dedup?.bytesPerKeyMemoryUsage ?? NaN, 0)})`,
  );
  // Issue 25: memory at a sustained half-peak load, from the soak scenarios.
  for (const [id, limitMb, what] of [
    ['s', 300, 'one process, defaults'],
    ['t', 200, 'a Redis API replica'],
  ] as const) {
    const soak = soaks.find((x) => x.id === id);
    add(`(${id}) soak, ${what}: max RSS ≤ ${limitMb} MB`, soak?.maxRssMb, limitMb, 'max', (v) => `${fmt(v, 0)} MB`);
    // "Flat": the floor garbage collection returns to rises by at most 10 MB from the middle to the last third
    // (the raw slope of a saw-tooth swings by tens of MB per minute either way; it is reported beside it).
    add(
      `(${id}) soak, ${what}: flat (RSS floor +≤ 10 MB, middle → last third)`,
      soak?.rssFloorChangeMb,
      10,
      'max',
      (v) => `${fmt(v, 0)} MB (slope ${fmt(soak?.rssSlopeMbPerMin ?? NaN, 1)} MB/min)`,
    );
  }
  add('(m) heap per retained in-memory audit record ≤ 2,500 bytes', auditHeap?.heapBytesPerRecord, 2500, 'max', (v) => `${fmt(v, 0)} bytes`);
  return checks;
}

/**
 * Tracing's CPU per request in (k) over (b), beside the same spans' cost on bare Fastify, (l) over
 * (a): the OpenTelemetry SDK's own floor, which no change to the gateway can go under.
 */
function tracingCostShown(by: ReadonlyMap<ScenarioId, ScenarioResult>): string {
  const over = (x: ScenarioId, y: ScenarioId) => {
    const traced = by.get(x)?.cpuMsPerRequest;
    const plain = by.get(y)?.cpuMsPerRequest;
    return traced === undefined || plain === undefined ? undefined : (traced - plain) * 1000;
  };
  const gateway = over('k', 'b');
  if (gateway === undefined) return '';
  const floor = over('l', 'a');
  return `; +${fmt(gateway, 0)} µs CPU per request${floor === undefined ? '' : `, the SDK's floor (l − a) +${fmt(floor, 0)} µs`}`;
}
