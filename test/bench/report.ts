/** The bench report: Markdown tables for stdout (and docs/performance.md), JSON for tools. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import type { AuditHeapResult } from './audit-heap.js';
import type { ScenarioResult } from './scenario-result.js';
import type { SoakResult } from './soak.js';
import type { TargetCheck } from './targets.js';

const num = (n: number, digits: number) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '–';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  redis: string;
  platform: string;
}

export function machineInfo(): MachineInfo {
  const redis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout?.match(/v=(\S+)/)?.[1] ?? 'unknown';
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    redis,
    platform: `${os.platform()} ${os.release()}`,
  };
}

export function resultsTable(results: readonly ScenarioResult[]): string {
  const base = results.find((r) => r.id === 'a');
  const rows = results.map((r) => {
    const ratio = base && base.reqPerSec > 0 ? `${num(r.reqPerSec / base.reqPerSec, 2)}×` : '–';
    const reqs = r.actionsPerRequest > 1 ? `${num(r.reqPerSec, 0)} (${num(r.actionsPerSec, 0)} actions/s)` : num(r.reqPerSec, 0);
    const redis = r.redis;
    const cmds = redis ? `${num(redis.commandsPerDispatch, 1)}${redis.probe ? ` (${num(redis.probe.clientCommandsPerDispatch, 1)} sent)` : ''}` : '–';
    const trips = redis?.probe ? num(redis.probe.roundTripsPerDispatch, 2) : '–';
    return `| ${r.id}: ${r.title} | ${reqs} | ${ratio} | ${num(r.latencyMs.p50, 2)} | ${num(r.latencyMs.p99, 2)} | ${num(r.cpuMsPerRequest, 3)} | ${num(r.rssMb, 0)} | ${cmds} | ${trips} |`;
  });
  return [
    '| scenario | req/s | × (a) | p50 ms | p99 ms | CPU ms/req | RSS MB | Redis cmds/dispatch | round trips/dispatch |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

export function detailsTable(results: readonly ScenarioResult[]): string {
  const rows = results.map((r) => {
    const failures = r.failures.non2xx + r.failures.errors + r.failures.timeouts;
    const redis = r.redis;
    const dedup = redis?.dedupMemory ? `${num(redis.dedupMemory.bytesPerKey, 0)} B × ${num(redis.dedupMemory.liveKeys, 0)}` : '–';
    const worker = r.cpuMsPerDispatch.worker === null ? '–' : num(r.cpuMsPerDispatch.worker, 3);
    return `| ${r.id} | ${num(r.requests, 0)} | ${failures} | ${num(r.idleRssMb, 0)} | ${num(r.cpuMsPerDispatch.api, 3)} | ${worker} | ${num(r.serverCores, 2)} | ${num(r.clientCores, 2)} | ${num(r.otherCores, 2)} | ${redis ? num(redis.cpuMsPerDispatch, 3) : '–'} | ${redis?.probe ? num(redis.probe.latencyRoundTrips, 2) : '–'} | ${redis ? num(redis.readsPerDispatch, 2) : '–'} | ${redis ? num(redis.usedMemoryBytesPerDispatch, 0) : '–'} | ${dedup} |`;
  });
  return [
    '| scenario | 2xx | failed | idle RSS MB | API CPU ms/dispatch | worker CPU ms/dispatch | gateway cores | client cores | other cores | Redis CPU ms/dispatch | round trips by latency | Redis reads/dispatch (load) | Redis bytes/dispatch | per dedup key |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

/**
 * Where Redis's time per dispatch goes, by command (INFO commandstats), for the scenarios on
 * Redis: the commands' own time, without the reads and writes of their sockets that `INFO cpu`
 * counts too. Empty string when no scenario ran on Redis.
 */
export function redisCommandsTable(results: readonly ScenarioResult[], top = 8): string {
  const rows = results.flatMap((r) => {
    const usec = r.redis?.commandUsecPerDispatch;
    if (!usec) return [];
    const total = Object.values(usec).reduce((a, b) => a + b, 0);
    const largest = Object.entries(usec)
      .sort(([, a], [, b]) => b - a)
      .slice(0, top)
      .map(([name, n]) => `${name} ${num(n, 1)}`)
      .join(', ');
    return [`| ${r.id} | ${num(r.redis?.cpuMsPerDispatch ? r.redis.cpuMsPerDispatch * 1000 : 0, 1)} | ${num(total, 1)} | ${largest} |`];
  });
  if (rows.length === 0) return '';
  return ['| scenario | Redis CPU µs/dispatch | in commands | largest, µs per dispatch |', '|---|--:|--:|---|', ...rows].join('\n');
}

/** The open-loop runs (empty string when no scenario had one). */
export function openLoopTable(results: readonly ScenarioResult[]): string {
  const rows = results.flatMap((r) => {
    const o = r.openLoop;
    if (!o) return [];
    const l = o.latency;
    return [
      `| ${r.id} | ${num(o.offeredPerSec, 0)} | ${num(o.achievedPerSec, 0)} | ${num(l.p50, 2)} | ${num(l.p90, 2)} | ${num(l.p99, 2)} | ${num(l.max, 2)} | ${o.failed} | ${o.skipped} |`,
    ];
  });
  if (rows.length === 0) return '';
  return [
    '| scenario | offered req/s | answered req/s | p50 ms | p90 ms | p99 ms | max ms | failed | not sent |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

/** The soak runs: the trend numbers, then RSS/heap every tenth sample. */
export function soakTable(soaks: readonly SoakResult[]): string {
  const rows = soaks.map((s) => {
    const every = Math.max(1, Math.round(s.samples.length / 10));
    const trace = s.samples
      .filter((_, i) => i % every === every - 1)
      .map((p) => `${num(p.atS, 0)} s: ${num(p.rssMb, 0)}/${num(p.heapUsedMb, 0)}`)
      .join(', ');
    return `| ${s.id}: ${s.title} | ${num(s.offeredPerSec, 0)} | ${num(s.durationS, 0)} | ${num(s.maxRssMb, 0)} | ${num(s.rssFloorChangeMb, 0)} | ${num(s.rssSlopeMbPerMin, 1)} | ${num(s.heapSlopeMbPerMin, 1)} | ${num(s.latency.p99, 2)} | ${s.failed + s.skipped} | ${trace} |`;
  });
  return [
    '| soak | req/s | s | max RSS MB | RSS floor change MB (middle → last third) | RSS slope MB/min (last third) | heap slope MB/min | p99 ms | failed | RSS/heap MB over time |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|---|',
    ...rows,
  ].join('\n');
}

/** `--interleave`: each round's throughput as a share of the first scenario's in that round, and their spread. */
export function roundRatiosTable(ratios: ReadonlyMap<string, readonly number[]>): string {
  const [first] = ratios.keys();
  const rows = [...ratios].map(([id, list]) => {
    const sorted = [...list].sort((x, y) => x - y);
    const spread = sorted.length > 0 ? `${num(sorted[0] as number, 2)}–${num(sorted[sorted.length - 1] as number, 2)}` : '–';
    return `| ${id} | ${spread} | ${list.map((r) => num(r, 2)).join(', ')} |`;
  });
  return [`| scenario | × (${first}) per round, lowest–highest | each round |`, '|---|--:|---|', ...rows].join('\n');
}

export function auditHeapLine(r: AuditHeapResult): string {
  return `${num(r.heapBytesPerRecord, 0)} bytes of heap per retained record (${num(r.recordChars, 0)} characters of record JSON each; ${num(r.records, 0)} records measured)`;
}

export function targetsTable(checks: readonly TargetCheck[]): string {
  return ['| target | measured | status |', '|---|---|---|', ...checks.map((c) => `| ${c.target} | ${c.measured} | ${c.status} |`)].join('\n');
}

export function writeJson(file: string, data: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}
