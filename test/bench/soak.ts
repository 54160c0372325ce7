/**
 * The soak scenarios (issue 25): one gateway under a steady open loop at half the throughput it
 * measures first, for minutes, with the API process's RSS and V8 heap sampled every few seconds.
 * A steady state shows as a flat line over the last third; growth as a slope.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prometheusSample } from '../support/prometheus-text.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import type { LoadClient } from './load-client.js';
import type { LatencySummary } from './load-protocol.js';
import { memory } from './proc-stats.js';
import { sanityCheck } from './sanity-check.js';
import { openLoopRate, type Scenario } from './scenarios.js';
import { startTopology } from './topology.js';

export interface SoakSettings {
  durationS: number;
  sampleEveryS: number;
  /** The closed-loop run that sets the rate (its throughput × OPEN_LOOP_SHARE). */
  probeS: number;
}

interface SoakSample {
  atS: number;
  rssMb: number;
  heapUsedMb: number;
}

export interface SoakResult {
  id: string;
  title: string;
  offeredPerSec: number;
  durationS: number;
  samples: SoakSample[];
  /** Least-squares slope over the last third of the samples, MiB per minute. */
  rssSlopeMbPerMin: number;
  heapSlopeMbPerMin: number;
  /**
   * The lowest RSS of the last third minus the lowest of the middle third: the floor a garbage
   * collection brings the process back to. The slope of a saw-tooth (GC every few tens of
   * seconds) swings by tens of MiB per minute; a leak raises the floor.
   */
  rssFloorChangeMb: number;
  maxRssMb: number;
  latency: LatencySummary;
  failed: number;
  skipped: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The heap the process reports in its own /metrics (prom-client's default metrics). */
async function heapUsedMb(url: string): Promise<number> {
  const bytes = prometheusSample(await (await fetch(`${url}/metrics`)).text(), 'sluice_nodejs_heap_size_used_bytes');
  return bytes === undefined ? Number.NaN : bytes / 2 ** 20;
}

/** Least-squares slope of y over x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return sxx === 0 ? Number.NaN : points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx;
}

export async function runSoak(scenario: Scenario, settings: SoakSettings, load: LoadClient): Promise<SoakResult> {
  const workDir = mkdtempSync(join(tmpdir(), `sluice-soak-${scenario.id}-`));
  let redis: RunningRedis | undefined;
  try {
    if (scenario.backend === 'redis') redis = await startRedisServer();
    const topology = await startTopology(scenario, { workDir, redisUrl: redis?.url, rulesDir: null });
    try {
      await sanityCheck(scenario, topology.url);
      const loadOptions = { url: topology.url, path: scenario.path, body: scenario.body, connections: scenario.connections };
      const probe = await load.run({ ...loadOptions, durationS: settings.probeS });
      const offeredPerSec = openLoopRate(probe);
      const api = topology.api[0];
      if (api === undefined) throw new Error(`soak ${scenario.id}: no API process`);
      const samples: SoakSample[] = [];
      let running = true;
      const started = performance.now();
      const sampling = (async () => {
        while (running) {
          await sleep(settings.sampleEveryS * 1000);
          if (!running) break;
          samples.push({ atS: (performance.now() - started) / 1000, rssMb: memory(api.pid).rssMb, heapUsedMb: await heapUsedMb(api.url) });
        }
      })();
      const run = await load.runOpenLoop({ ...loadOptions, durationS: settings.durationS, ratePerSec: offeredPerSec }).finally(() => {
        running = false;
      });
      await sampling;
      const middleThird = samples.slice(Math.floor(samples.length / 3), Math.floor((samples.length * 2) / 3));
      const lastThird = samples.slice(Math.floor((samples.length * 2) / 3));
      const perMinute = (pick: (s: SoakSample) => number) => slope(lastThird.map((s) => ({ x: s.atS / 60, y: pick(s) })));
      const floor = (part: readonly SoakSample[]) => Math.min(...part.map((s) => s.rssMb));
      return {
        id: scenario.id,
        title: scenario.title,
        offeredPerSec,
        durationS: settings.durationS,
        samples,
        rssSlopeMbPerMin: perMinute((s) => s.rssMb),
        heapSlopeMbPerMin: perMinute((s) => s.heapUsedMb),
        rssFloorChangeMb: floor(lastThird) - floor(middleThird),
        maxRssMb: Math.max(...samples.map((s) => s.rssMb)),
        latency: run.latency,
        failed: run.failed,
        skipped: run.skipped,
      };
    } finally {
      await topology.stop();
    }
  } finally {
    await redis?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}
