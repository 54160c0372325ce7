import { describe, expect, it } from 'vitest';
import { combineWindows, interleavable, roundRatios, type WindowRun } from './interleave.js';
import type { LoadResult } from './load-protocol.js';
import { scenarioTable, type ScenarioId } from './scenarios.js';

const table = scenarioTable('test');
const scenario = (id: ScenarioId) => {
  const s = table.find((x) => x.id === id);
  if (!s) throw new Error(`no scenario ${id}`);
  return s;
};

/** A window of `ok` answers in `durationS`, with a p99 that tells windows apart. */
function window(id: ScenarioId, round: number, ok: number, cpuMs: number, p99: number, durationS = 3): WindowRun {
  const load: LoadResult = {
    durationS,
    ok,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: { '200': ok },
    latency: { p50: p99 / 4, p90: p99 / 2, p99, max: p99 * 2, mean: p99 / 3 },
  };
  return { id, round, load, dispatched: ok, cpuMs: { [process.pid]: cpuMs }, clientCpuMs: 100, busyMs: cpuMs + 100 };
}

describe('bench --interleave', () => {
  it('takes the single-process scenarios only', () => {
    expect(table.filter(interleavable).map((s) => s.id)).toEqual(['a', 'x', 'b', 'c', 'd', 'g', 'i', 'j', 'k', 'l']);
  });

  it("sums a scenario's windows into one result: rates over the summed time, latency of the median window", () => {
    const windows = [window('b', 1, 9_000, 2_700, 30), window('k', 1, 6_000, 2_700, 90), window('b', 2, 12_000, 2_760, 20), window('b', 3, 6_000, 2_640, 50)];
    const proc = { pid: process.pid, role: 'serve' };
    const r = combineWindows(scenario('b'), windows, { api: [proc], gateway: [proc] }, new Map([[process.pid, 100]]), null);
    expect(r).toMatchObject({ id: 'b', durationS: 9, requests: 27_000, dispatched: 27_000, reqPerSec: 3_000, idleRssMb: 100, openLoop: null, redis: null });
    expect(r.failures.statusCodes).toEqual({ '200': 27_000 });
    expect(r.cpuMsPerRequest).toBeCloseTo(8_100 / 27_000, 6);
    expect(r.cpuMsPerDispatch).toEqual({ api: 8_100 / 27_000, worker: null });
    expect(r.serverCores).toBeCloseTo(0.9, 6);
    expect(r.latencyMs.p99).toBe(30); // the window of 9,000: between 6,000 and 12,000
    expect(() => combineWindows(scenario('c'), windows, { api: [proc], gateway: [proc] }, new Map(), null)).toThrow(/no windows of scenario c/);
  });

  it("gives each round's throughput as a share of the first scenario's in the same round", () => {
    const windows = [
      window('b', 1, 9_000, 0, 1),
      window('k', 1, 6_000, 0, 1),
      window('k', 2, 7_000, 0, 1),
      window('b', 2, 10_000, 0, 1),
      window('k', 3, 5_000, 0, 1),
    ];
    const ratios = roundRatios(windows, ['b', 'k']);
    expect(ratios.get('b')).toEqual([1, 1]);
    expect(ratios.get('k')?.map((x) => Number(x.toFixed(3)))).toEqual([0.667, 0.7]); // round 3 has no (b): skipped
  });
});
