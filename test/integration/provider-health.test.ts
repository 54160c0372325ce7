import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { uniquePrefix } from '../support/redis-url.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Entry = { provider: string; healthy: boolean; total_requests: number; successes: number; failures: number } & Record<string, unknown>;

/** 100 calls with known latencies: 60 at once, 35 after 40 ms, 5 after 150 ms (each call's payload says which). */
const DELAYS = [...Array(60).fill(0), ...Array(35).fill(40), ...Array(5).fill(150)] as number[];

async function health(url: string): Promise<Entry[]> {
  return ((await requestJson('GET', `${url}/v1/providers/health`)).body as { providers: Entry[] }).providers;
}

/** The q-quantile (0..1) of `values`, nearest rank. */
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

/**
 * The percentiles: at least the known delays (the 40 ms calls above the 95th, the 150 ms ones at
 * the 99th), and at most the bucket above what the client itself timed for the same calls (a
 * loaded machine slows both alike; the provider's latency is part of the client's).
 */
function expectPercentiles(entry: Entry, clientMs: readonly number[]): void {
  const within = (q: number, floor: number) => Math.max(floor, 2 * quantile(clientMs, q) + 5);
  expect(entry.p50_latency_ms).toBeLessThanOrEqual(within(0.5, 20));
  expect(entry.p95_latency_ms).toBeGreaterThanOrEqual(30);
  expect(entry.p95_latency_ms).toBeLessThanOrEqual(within(0.95, 80));
  expect(entry.p99_latency_ms).toBeGreaterThanOrEqual(130);
  expect(entry.p99_latency_ms).toBeLessThanOrEqual(within(0.99, 300));
}

/** Dispatches one timed call and returns how long the client waited for it. */
async function timedCall(url: string, i: number): Promise<number> {
  const started = performance.now();
  await postJson(`${url}/v1/dispatch`, sampleAction({ provider: 'timed', payload: { delay: DELAYS[i], i } }));
  return performance.now() - started;
}

describe.each(BACKENDS)('provider health (%s)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  let broken: HttpSink;

  beforeAll(async () => {
    sink = await startSink();
    sink.delayMs = (call) => Number(call.payload['delay'] ?? 0);
    broken = await startSink();
    broken.status = 500;
    gw = await startGateway(backend, {
      providers: [
        { name: 'timed', type: 'webhook', url: sink.url },
        { name: 'broken', type: 'webhook', url: broken.url },
        { name: 'idle', type: 'noop' },
      ],
      executor: { max_retries: 0 },
    });
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
    await broken.close();
  });

  it('reports totals, success rate and latency percentiles of every configured provider', async () => {
    const clientMs: number[] = [];
    for (const i of DELAYS.keys()) clientMs.push(await timedCall(gw.url, i));
    for (let i = 0; i < 4; i++) await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'broken' }));
    const entries = await health(gw.url);
    expect(entries.map((e) => e.provider)).toEqual(['timed', 'broken', 'idle']);
    const [timed, bad, idle] = entries as [Entry, Entry, Entry];
    expect(timed).toMatchObject({ healthy: true, circuit_breaker_state: null, total_requests: 100, successes: 100, failures: 0, success_rate: 100 });
    expect(timed.avg_latency_ms).toBeGreaterThanOrEqual(0.35 * 40 + 0.05 * 150);
    expectPercentiles(timed, clientMs);
    expect(bad).toMatchObject({ healthy: false, total_requests: 4, successes: 0, failures: 4, success_rate: 0 });
    expect(idle).toMatchObject({ healthy: true, total_requests: 0, success_rate: 100, p99_latency_ms: 0 });
  });
});

describe('provider health summed across two replicas (redis)', () => {
  let a: RunningGateway;
  let b: RunningGateway;
  let sink: HttpSink;

  beforeAll(async () => {
    sink = await startSink();
    sink.delayMs = (call) => Number(call.payload['delay'] ?? 0);
    const prefix = uniquePrefix();
    const config = { providers: [{ name: 'timed', type: 'webhook', url: sink.url }], executor: { max_retries: 0 }, state: { prefix } };
    a = await startGateway('redis', config);
    b = await startGateway('redis', config);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await sink.close();
  });

  it('half the calls on each replica: either replica reports all 100, percentiles from the merged histogram', async () => {
    const clientMs: number[] = [];
    await Promise.all(
      [a, b].map(async (gw, side) => {
        for (let i = side; i < DELAYS.length; i += 2) clientMs.push(await timedCall(gw.url, i));
      }),
    );
    // Each replica adds its counts to the shared window every second; the one asked adds its own first.
    const [entry] = await poll(
      'both replicas’ counts',
      () => health(a.url),
      (e) => e[0]?.total_requests === 100,
      { timeoutMs: 5000, intervalMs: 100 },
    );
    expectPercentiles(entry as Entry, clientMs);
    expect((await health(b.url))[0]?.total_requests).toBe(100);
  });
});
