import { describe, expect, it } from 'vitest';
import type { ScenarioResult } from './scenario-result.js';
import type { ScenarioId } from './scenarios.js';
import { checkTargets } from './targets.js';

function result(id: ScenarioId, reqPerSec: number, cpuMsPerRequest: number): ScenarioResult {
  return {
    id,
    title: id,
    connections: 50,
    durationS: 10,
    requests: reqPerSec * 10,
    actionsPerRequest: 1,
    reqPerSec,
    actionsPerSec: reqPerSec,
    latencyMs: { p50: 1, p90: 2, p99: 3, max: 4, mean: 1 },
    failures: { non2xx: 0, errors: 0, timeouts: 0, statusCodes: {} },
    dispatched: reqPerSec * 10,
    cpuMsPerRequest,
    cpuMsPerDispatch: { api: cpuMsPerRequest, worker: null },
    serverCores: 1,
    clientCores: 0.5,
    otherCores: 0,
    rssMb: 100,
    idleRssMb: 100,
    processes: [],
    redis: null,
    openLoop: null,
    silences: null,
  };
}

describe('the tracing target (k)', () => {
  const k = (results: ScenarioResult[]) => checkTargets(results).find((t) => t.target.startsWith('(k)'));

  it("shows tracing's CPU per request over (b) beside the SDK's own over bare Fastify, (l) − (a)", () => {
    const row = k([result('a', 10_000, 0.1), result('l', 5_000, 0.18), result('b', 2_500, 0.4), result('k', 1_800, 0.55)]);
    expect(row).toMatchObject({ status: 'MISS' });
    expect(row?.measured).toBe("0.72× (1800 / 2500 req/s); +150 µs CPU per request, the SDK's floor (l − a) +80 µs");
  });

  it('leaves the floor out when (l) did not run, and judges the ratio alone', () => {
    const row = k([result('b', 2_000, 0.4), result('k', 1_800, 0.46)]);
    expect(row).toMatchObject({ status: 'PASS', measured: '0.90× (1800 / 2000 req/s); +60 µs CPU per request' });
  });
});
