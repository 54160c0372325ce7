/**
 * Keeps `npm run bench` from rotting: one memory scenario for about a second through the real
 * machinery (built CLI, forked autocannon driver, /proc sampling, report), asserting that it
 * produced numbers, not how fast they are; the calibration (x) for a second, its spin seen in its
 * CPU per request; the silence scenario's set-up and checks with a
 * dozen silences instead of 1 020; (a) and (b) interleaved for two one-second rounds; the memory
 * soak for five seconds; the spans the tracing floor (l) exports; a second of allocation
 * sampling (bench:alloc); the heap per retained audit
 * record over 2,000 records; and the Redis counting proxy against the suite's
 * redis-server. The full suite is `npm run bench`.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../support/redis-url.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SAMPLE_ACTION } from './action-body.js';
import { profileAllocations } from './alloc-profile.js';
import { measureAuditHeap } from './audit-heap.js';
import { runInterleaved } from './interleave.js';
import { LoadClient } from './load-client.js';
import { RedisCountingProxy, trafficDelta } from './redis-counting-proxy.js';
import { auditHeapLine, detailsTable, openLoopTable, resultsTable, roundRatiosTable, soakTable } from './report.js';
import { runScenario } from './scenario-runner.js';
import { scenarioTable } from './scenarios.js';
import { runSoak, slope } from './soak.js';
import { checkTargets } from './targets.js';
import { startTopology } from './topology.js';

describe('bench smoke', () => {
  let load: LoadClient;
  beforeAll(() => {
    load = LoadClient.start();
  });
  afterAll(async () => {
    await load.close();
  });

  it('runs scenario (b) for a second and reports its numbers', async () => {
    const scenario = scenarioTable('smoke').find((s) => s.id === 'b');
    if (!scenario) throw new Error('scenario b is missing from the table');
    const r = await runScenario(scenario, { durationS: 1, warmupS: 0, probeDispatches: 0, settleMs: 200 }, load);

    expect(r.requests).toBeGreaterThan(0);
    expect(r.failures).toMatchObject({ non2xx: 0, errors: 0, timeouts: 0 });
    expect(r.reqPerSec).toBeGreaterThan(0);
    expect(r.dispatched).toBeGreaterThanOrEqual(r.requests);
    for (const v of [r.latencyMs.p50, r.latencyMs.p99, r.cpuMsPerRequest, r.rssMb, r.idleRssMb]) {
      expect(Number.isFinite(v) && v > 0).toBe(true);
    }
    expect(r.redis).toBeNull();
    // Then the open loop at half that rate: every scheduled request answered, latencies from the schedule.
    expect(r.openLoop?.offeredPerSec).toBe(Math.max(1, Math.round((0.5 * r.requests) / r.durationS)));
    expect(r.openLoop).toMatchObject({ failed: 0, skipped: 0 });
    expect(r.openLoop?.ok).toBeGreaterThan(0);
    expect(Number.isFinite(r.openLoop?.latency.p99) && (r.openLoop?.latency.p99 ?? 0) > 0).toBe(true);
    expect(openLoopTable([r])).toContain('| b |');
    expect(resultsTable([r])).toContain('| b: memory, no rules, audit on |');
    expect(detailsTable([r])).toContain('| b |');
    const targets = checkTargets([r]);
    expect(targets.find((t) => t.target.includes('p99') && t.target.includes('(b)'))?.status).toMatch(/PASS|MISS/);
  }, 60_000);

  it('runs the calibration (x): the baseline spends its spin on every request', async () => {
    const table = scenarioTable('smoke').find((s) => s.id === 'x');
    if (!table?.baselineWorkUs) throw new Error('scenario x (calibration) is missing from the table');
    // A spin far above bare Fastify's own CPU per request (≈ 0.04 ms), so it cannot pass without the spin.
    const scenario = { ...table, baselineWorkUs: 500 };
    const r = await runScenario(scenario, { durationS: 1, warmupS: 0, probeDispatches: 0, settleMs: 200 }, load);
    expect(r.failures).toMatchObject({ non2xx: 0, errors: 0, timeouts: 0 });
    // The spin is wall time: a server descheduled during it spends a little less CPU than it.
    expect(r.cpuMsPerRequest).toBeGreaterThan(0.4);
    expect(r.openLoop?.ok).toBeGreaterThan(0);
  }, 60_000);

  it("creates the silence scenario's silences and checks them before its load (scaled down)", async () => {
    const full = scenarioTable('smoke').find((s) => s.id === 'j');
    if (!full?.silences) throw new Error('scenario j (silences) is missing from the table');
    const scenario = { ...full, silences: { otherScopes: 10, ownScope: 2 } };
    const r = await runScenario(scenario, { durationS: 1, warmupS: 0, probeDispatches: 0, settleMs: 200 }, load);

    expect(r.silences?.created).toBe(12);
    expect(r.requests).toBeGreaterThan(0);
    expect(r.failures).toMatchObject({ non2xx: 0, errors: 0, timeouts: 0 });
    const target = checkTargets([{ ...r, id: 'i' }, r]).find((t) => t.target.startsWith('(j)'));
    expect(target?.status).toBe('PASS'); // the same run against itself: 1.00×
  }, 60_000);

  it('interleaves (a) and (b) side by side, pinned where the machine has two CPUs, a window each per round', async () => {
    const pair = scenarioTable('smoke').filter((s) => s.id === 'a' || s.id === 'b');
    const run = await runInterleaved(pair, { rounds: 2, windowS: 1, warmupS: 0, pin: cpus().length >= 2 }, load);
    expect(run.windows.map((w) => `${w.round}${w.id}`)).toEqual(['1a', '1b', '2b', '2a']);
    expect(run.results.map((r) => r.id)).toEqual(['a', 'b']);
    for (const r of run.results) {
      expect(r.requests).toBe(run.windows.filter((w) => w.id === r.id).reduce((n, w) => n + w.load.ok, 0));
      expect(r.failures).toMatchObject({ non2xx: 0, errors: 0, timeouts: 0 });
      expect(r.cpuMsPerRequest).toBeGreaterThan(0);
    }
    expect(run.ratios.get('b')?.length).toBe(2);
    expect(roundRatiosTable(run.ratios)).toContain('| b |');
  }, 60_000);

  it('exports from (l), the tracing floor, the spans of a plain dispatch in (k)', async () => {
    const scenario = scenarioTable('smoke').find((s) => s.id === 'l');
    if (!scenario?.tracing || scenario.server !== 'baseline') throw new Error('scenario l (the tracing floor) is missing from the table');
    const collector = await startOtlpReceiver();
    const workDir = mkdtempSync(join(tmpdir(), 'sluice-bench-l-'));
    try {
      const topology = await startTopology(scenario, { workDir, rulesDir: null, tracingEndpoint: collector.url });
      const res = await fetch(`${topology.url}/v1/dispatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(SAMPLE_ACTION),
      });
      expect(res.status).toBe(200);
      await topology.stop(); // shutting down flushes the export queue
    } finally {
      await collector.close();
      rmSync(workDir, { recursive: true, force: true });
    }
    const request = collector.spans.find((s) => s.name === 'request');
    expect(request?.attributes?.map((a) => a.key)).toEqual(expect.arrayContaining(['sluice.action_id', 'sluice.tenant', 'sluice.outcome']));
    expect(collector.spans.filter((s) => s.parentSpanId === request?.spanId).map((s) => s.name)).toEqual(['stage execute']);
  }, 60_000);

  it('samples what a dispatch of (b) allocates, by function and by gateway frame (bench:alloc)', async () => {
    const scenario = scenarioTable('smoke').find((s) => s.id === 'b');
    if (!scenario) throw new Error('scenario b is missing from the table');
    const s = await profileAllocations(scenario, { windowS: 1, warmupS: 0 }, load);
    expect(s.dispatches).toBeGreaterThan(0);
    // A dispatch parses a body, builds a record and writes a log line: more than a kilobyte, whatever else changes.
    expect(s.bytesPerDispatch).toBeGreaterThan(1024);
    expect(s.byGatewayFrame.some((x) => /^\S+ (libs|apps)\//.test(x.frame))).toBe(true);
  }, 60_000);

  it('runs the memory soak for a few seconds: samples RSS and heap, their trend over the last third', async () => {
    const scenario = scenarioTable('smoke').find((s) => s.id === 's');
    if (!scenario?.soak) throw new Error('soak scenario s is missing from the table');
    const r = await runSoak(scenario, { durationS: 5, sampleEveryS: 1, probeS: 1 }, load);
    expect(r.failed + r.skipped).toBe(0);
    expect(r.offeredPerSec).toBeGreaterThan(0);
    expect(r.samples.length).toBeGreaterThanOrEqual(4);
    for (const sample of r.samples) expect(sample.rssMb > 0 && sample.heapUsedMb > 0).toBe(true);
    expect(Number.isFinite(r.rssSlopeMbPerMin) && Number.isFinite(r.heapSlopeMbPerMin) && Number.isFinite(r.rssFloorChangeMb)).toBe(true);
    expect(soakTable([r])).toContain('| s: soak: memory, no rules |');
    expect(checkTargets([], [r]).find((t) => t.target.startsWith('(s) soak') && t.target.includes('max RSS'))?.status).toMatch(/PASS|MISS/);
  }, 60_000);

  it('measures the heap per retained audit record (m) in a child process', async () => {
    const r = await measureAuditHeap(2000);
    expect(r.records).toBe(2000);
    // Numbers, not a verdict: a record's JSON is hundreds of characters, its heap more than that.
    expect(r.recordChars).toBeGreaterThan(300);
    expect(r.heapBytesPerRecord).toBeGreaterThan(r.recordChars);
    expect(auditHeapLine(r)).toContain('bytes of heap per retained record');
    expect(checkTargets([], [], r).find((t) => t.target.startsWith('(m)'))?.status).toMatch(/PASS|MISS/);
  }, 60_000);

  it('fits a least-squares slope', () => {
    expect(
      slope([
        { x: 0, y: 1 },
        { x: 1, y: 3 },
        { x: 2, y: 5 },
      ]),
    ).toBe(2);
    expect(slope([{ x: 1, y: 1 }])).toBeNaN();
  });

  it('counts Redis commands and round trips through the counting proxy', async () => {
    const target = new URL(testRedisUrl());
    const proxy = await RedisCountingProxy.start({ host: target.hostname, port: Number(target.port) });
    proxy.replyDelayMs = 2;
    const client = new Redis(proxy.url, { lazyConnect: true });
    try {
      await client.connect();
      const before = proxy.snapshot();
      await client.pipeline().ping().ping().ping().exec(); // one round trip, three commands
      await Promise.all([client.ping(), client.ping()]); // written separately, still one round trip
      await client.ping(); // and one more
      proxy.ignore = (c) => c.name === 'GET' && c.arg === 'bench-smoke:ignored';
      await client.get('bench-smoke:ignored'); // left out
      proxy.offPath = (c) => c.name === 'ECHO';
      await client.echo('background'); // a command, not a round trip
      const d = trafficDelta(proxy.snapshot(), before);
      expect(d).toEqual({ commands: 7, roundTrips: 3, byCommand: { PING: 6, ECHO: 1 } });
    } finally {
      client.disconnect();
      await proxy.close();
    }
  });
});
