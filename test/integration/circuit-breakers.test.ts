import { ManualClock } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader } from '../support/credentials.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { uniquePrefix } from '../support/redis-url.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Outcome = { outcome: string; error?: { code: string }; original_provider?: string; new_provider?: string };
const NAMES = ['lonely', 'flaky', 'backup', 'picky', 'probe', 'crowd'] as const;

const breakerConfig = (sinks: Record<string, HttpSink>) => ({
  providers: NAMES.map((name) => ({ name, type: 'webhook', url: sinks[name]?.url })),
  executor: { max_retries: 0, timeout_seconds: 2 },
  circuit_breaker: {
    enabled: true,
    failure_threshold: 3,
    success_threshold: 2,
    recovery_timeout_seconds: 30,
    providers: { flaky: { fallback_provider: 'backup' }, crowd: { failure_threshold: 40 } },
  },
});

describe.each(BACKENDS)('circuit breakers (%s)', (backend) => {
  let gw: RunningGateway;
  const clock = new ManualClock(Date.UTC(2026, 3, 1));
  const sinks: Record<string, HttpSink> = {};
  const dispatch = async (provider: string) => (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider }))).body as Outcome;
  const dispatchMany = async (provider: string, n: number) => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < n; i++) outcomes.push(await dispatch(provider));
    return outcomes;
  };
  const stateOf = async (provider: string) => {
    const list = (await requestJson('GET', `${gw.url}/admin/circuit-breakers`)).body as { circuit_breakers: { provider: string; state: string }[] };
    return list.circuit_breakers.find((b) => b.provider === provider)?.state;
  };
  const codes = (outcomes: Outcome[]) => outcomes.map((o) => o.error?.code ?? o.outcome);

  beforeAll(async () => {
    for (const name of NAMES) sinks[name] = await startSink();
    gw = await startGateway(backend, breakerConfig(sinks), { clock });
  });
  afterAll(async () => {
    await gw.close();
    for (const sink of Object.values(sinks)) await sink.close();
  });

  it('opens after failure_threshold retryable failures: later calls fail with CIRCUIT_OPEN and never reach the provider', async () => {
    sinks.lonely!.status = 500;
    expect(codes(await dispatchMany('lonely', 5))).toEqual(['EXECUTION_FAILED', 'EXECUTION_FAILED', 'EXECUTION_FAILED', 'CIRCUIT_OPEN', 'CIRCUIT_OPEN']);
    expect(sinks.lonely!.received).toHaveLength(3);
    expect(await stateOf('lonely')).toBe('open');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/sluice_circuit_breaker_state\{provider="lonely"\} 1/);
  });

  it('recovers after the recovery timeout: half-open lets a probe through, success_threshold successes close it', async () => {
    sinks.lonely!.status = 200;
    await clock.advanceAsync(29_000);
    expect(codes(await dispatchMany('lonely', 1))).toEqual(['CIRCUIT_OPEN']);
    expect(await stateOf('lonely')).toBe('open');
    await clock.advanceAsync(1_000);
    // Past the timeout the next call is the probe: reported half-open before any call comes (an
    // idle provider's breaker read open, in the gauge and the views, until someone called it).
    expect(await stateOf('lonely')).toBe('half_open');
    expect(await (await fetch(`${gw.url}/metrics`)).text()).toMatch(/sluice_circuit_breaker_state\{provider="lonely"\} 2/);
    // Not healthy until a probe has closed it, however its window's attempts went.
    const health = (await requestJson('GET', `${gw.url}/v1/providers/health`)).body as { providers: { provider: string; healthy: boolean }[] };
    expect(health.providers.find((p) => p.provider === 'lonely')).toMatchObject({ healthy: false, circuit_breaker_state: 'half_open' });
    expect(codes(await dispatchMany('lonely', 1))).toEqual(['executed']);
    expect(await stateOf('lonely')).toBe('half_open');
    expect(codes(await dispatchMany('lonely', 1))).toEqual(['executed']);
    expect(await stateOf('lonely')).toBe('closed');
    expect(sinks.lonely!.received).toHaveLength(5);
  });

  it('a failed probe opens it again for another recovery timeout', async () => {
    sinks.probe!.status = 500;
    await dispatchMany('probe', 3);
    await clock.advanceAsync(30_000);
    expect(codes(await dispatchMany('probe', 2))).toEqual(['EXECUTION_FAILED', 'CIRCUIT_OPEN']);
    expect(await stateOf('probe')).toBe('open');
    expect(sinks.probe!.received).toHaveLength(4);
  });

  it('sends calls to the fallback provider while open: outcome rerouted', async () => {
    sinks.flaky!.status = 503;
    const outcomes = await dispatchMany('flaky', 5);
    expect(codes(outcomes)).toEqual(['EXECUTION_FAILED', 'EXECUTION_FAILED', 'EXECUTION_FAILED', 'rerouted', 'rerouted']);
    expect(outcomes[4]).toMatchObject({ original_provider: 'flaky', new_provider: 'backup' });
    expect(sinks.flaky!.received).toHaveLength(3);
    expect(sinks.backup!.received).toHaveLength(2);
  });

  it('client errors (4xx) do not trip it', async () => {
    sinks.picky!.status = 400;
    expect(codes(await dispatchMany('picky', 5))).toEqual(Array(5).fill('EXECUTION_FAILED'));
    expect(sinks.picky!.received).toHaveLength(5);
    expect(await stateOf('picky')).toBe('closed');
  });

  it('trip forces it open and reset closes it; unknown providers are 404', async () => {
    const tripped = await postJson(`${gw.url}/admin/circuit-breakers/picky/trip`, {});
    expect(tripped).toMatchObject({ status: 200, body: { provider: 'picky', state: 'open', message: 'circuit breaker tripped', failure_threshold: 3 } });
    expect(codes(await dispatchMany('picky', 1))).toEqual(['CIRCUIT_OPEN']);
    expect((await postJson(`${gw.url}/admin/circuit-breakers/picky/reset`, {})).body).toMatchObject({ state: 'closed', message: 'circuit breaker reset' });
    sinks.picky!.status = 200;
    expect(codes(await dispatchMany('picky', 1))).toEqual(['executed']);
    expect((await postJson(`${gw.url}/admin/circuit-breakers/nobody/trip`, {})).status).toBe(404);
    const list = (await requestJson('GET', `${gw.url}/admin/circuit-breakers`)).body as { circuit_breakers: Record<string, unknown>[] };
    expect(list.circuit_breakers.find((b) => b.provider === 'flaky')).toEqual({
      provider: 'flaky',
      state: 'open',
      failure_threshold: 3,
      success_threshold: 2,
      recovery_timeout_seconds: 30,
      fallback_provider: 'backup',
    });
  });

  it('a breaker tripped on an idle provider reads half-open once its timeout passed, and the provider unhealthy until a probe closes it', async () => {
    expect((await postJson(`${gw.url}/admin/circuit-breakers/crowd/trip`, {})).status).toBe(200);
    await clock.advanceAsync(30_000);
    const health = (await requestJson('GET', `${gw.url}/v1/providers/health`)).body as { providers: { provider: string }[] };
    // No attempt in its window: only the breaker says it has not recovered.
    expect(health.providers.find((p) => p.provider === 'crowd')).toMatchObject({ circuit_breaker_state: 'half_open', total_requests: 0, healthy: false });
    expect((await postJson(`${gw.url}/admin/circuit-breakers/crowd/reset`, {})).status).toBe(200);
  });
});

describe('circuit breakers: off, and guarded', () => {
  it('answers 404 while breakers are off', async () => {
    const gw = await startGateway('memory');
    try {
      expect((await requestJson('GET', `${gw.url}/admin/circuit-breakers`)).status).toBe(404);
      expect((await postJson(`${gw.url}/admin/circuit-breakers/x/trip`, {})).status).toBe(404);
    } finally {
      await gw.close();
    }
  });

  it('needs the admin or operator role (403 for a viewer), and a grant over every tenant of the provider to trip or reset', async () => {
    const grant = { tenants: ['*'], namespaces: ['*'], actions: ['*'] };
    const { file } = credentialsFile({
      keys: [
        { name: 'op', role: 'operator', grants: [grant] },
        { name: 'viewer', role: 'viewer', grants: [grant] },
        { name: 'tenant-op', role: 'operator', grants: [{ ...grant, tenants: ['acme'] }] },
        { name: 'other-provider-op', role: 'operator', grants: [{ ...grant, providers: ['q'] }] },
        { name: 'one-action-op', role: 'operator', grants: [{ ...grant, actions: ['send'] }] },
      ],
    });
    const gw = await startGateway('memory', {
      auth: { enabled: true, file },
      providers: [{ name: 'p', type: 'noop' }],
      circuit_breaker: { enabled: true },
    });
    try {
      expect((await requestJson('GET', `${gw.url}/admin/circuit-breakers`, undefined, keyHeader('viewer'))).status).toBe(403);
      expect((await postJson(`${gw.url}/admin/circuit-breakers/p/trip`, {}, keyHeader('viewer'))).status).toBe(403);
      // A tenant's operator must not cut the provider off for every tenant; the breaker stays closed.
      for (const caller of ['tenant-op', 'other-provider-op', 'one-action-op']) {
        const refused = await postJson(`${gw.url}/admin/circuit-breakers/p/trip`, {}, keyHeader(caller));
        expect(refused).toMatchObject({
          status: 403,
          body: { code: 'FORBIDDEN', error: expect.stringMatching(/^forbidden: no grant covers tenant=\*, namespace=\*, provider=p/) },
        });
      }
      const listed = await requestJson('GET', `${gw.url}/admin/circuit-breakers`, undefined, keyHeader('tenant-op'));
      expect(listed.body).toMatchObject({ circuit_breakers: [{ provider: 'p', state: 'closed' }] });
      expect((await postJson(`${gw.url}/admin/circuit-breakers/p/trip`, {}, keyHeader('op'))).status).toBe(200);
      expect((await postJson(`${gw.url}/admin/circuit-breakers/p/reset`, {}, keyHeader('tenant-op'))).status).toBe(403);
      expect((await postJson(`${gw.url}/admin/circuit-breakers/p/reset`, {}, keyHeader('op'))).status).toBe(200);
      expect((await requestJson('GET', `${gw.url}/admin/circuit-breakers`)).status).toBe(401);
    } finally {
      await gw.close();
    }
  });

  it('refuses to start when an override names an unknown provider or fallback', async () => {
    await expect(
      startGateway('memory', {
        providers: [{ name: 'p', type: 'noop' }],
        circuit_breaker: { enabled: true, providers: { p: { fallback_provider: 'ghost' } } },
      }),
    ).rejects.toThrow(/fallback_provider: unknown provider ghost/);
  });
});

describe('circuit breakers shared by two replicas (redis)', () => {
  let a: RunningGateway;
  let b: RunningGateway;
  const sinks: Record<string, HttpSink> = {};
  // One clock for both replicas, as one wall clock is for real ones.
  const clock = new ManualClock(Date.UTC(2026, 3, 1));

  beforeAll(async () => {
    for (const name of NAMES) sinks[name] = await startSink();
    const prefix = uniquePrefix();
    a = await startGateway('redis', { ...breakerConfig(sinks), state: { prefix } }, { clock });
    b = await startGateway('redis', { ...breakerConfig(sinks), state: { prefix } }, { clock });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    for (const sink of Object.values(sinks)) await sink.close();
  });

  it('a trip on replica A rejects the next call on replica B', async () => {
    expect((await postJson(`${a.url}/admin/circuit-breakers/lonely/trip`, {})).status).toBe(200);
    expect(((await postJson(`${b.url}/v1/dispatch`, sampleAction({ provider: 'lonely' }))).body as Outcome).error?.code).toBe('CIRCUIT_OPEN');
    expect(sinks.lonely!.received).toHaveLength(0);
  });

  it("a replica's gauge shows a breaker another replica changed, at the next scrape", async () => {
    const gauge = async (gw: RunningGateway) =>
      /^sluice_circuit_breaker_state\{provider="lonely"\} (\d)$/m.exec(await (await fetch(`${gw.url}/metrics`)).text())?.[1];
    expect((await postJson(`${a.url}/admin/circuit-breakers/lonely/trip`, {})).status).toBe(200);
    expect(await gauge(a)).toBe('1');
    expect((await postJson(`${b.url}/admin/circuit-breakers/lonely/reset`, {})).status).toBe(200);
    expect([await gauge(a), await gauge(b)]).toEqual(['0', '0']);
  });

  it('failures counted on either replica add up to the threshold', async () => {
    sinks.picky!.status = 502;
    const on = (gw: RunningGateway) => postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'picky' })).then((r) => r.body as Outcome);
    const outcomes = [await on(a), await on(b), await on(a), await on(b)];
    expect(outcomes.map((o) => o.error?.code)).toEqual(['EXECUTION_FAILED', 'EXECUTION_FAILED', 'EXECUTION_FAILED', 'CIRCUIT_OPEN']);
    expect(sinks.picky!.received).toHaveLength(3);
  });

  it('60 concurrent failures on both replicas all count: a threshold of 40 opens it', async () => {
    sinks.crowd!.status = 503;
    sinks.crowd!.delayMs = () => 50; // the calls overlap, and so does their counting
    const call = (gw: RunningGateway) => postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'crowd' })).then((r) => r.body as Outcome);
    const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => call(i % 2 === 0 ? a : b)));
    // On a loaded machine the last calls may start after the 40th failure was counted: rejected then.
    const codes = outcomes.map((o) => o.error?.code);
    expect(codes.every((c) => c === 'EXECUTION_FAILED' || c === 'CIRCUIT_OPEN')).toBe(true);
    expect(codes.filter((c) => c === 'EXECUTION_FAILED').length).toBeGreaterThanOrEqual(40);
    expect((await call(b)).error?.code).toBe('CIRCUIT_OPEN');
  });

  it('half-open admits one probe across both replicas: 10 concurrent calls, one reaches the provider', async () => {
    sinks.probe!.status = 500;
    const call = (gw: RunningGateway) => postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'probe' })).then((r) => r.body as Outcome);
    for (const gw of [a, b, a]) await call(gw);
    expect(sinks.probe!.received).toHaveLength(3);
    sinks.probe!.status = 200;
    sinks.probe!.delayMs = () => 300; // the probe is still out while the others arrive
    await clock.advanceAsync(30_000);
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => call(i % 2 === 0 ? a : b)));
    expect(outcomes.filter((o) => o.outcome === 'executed')).toHaveLength(1);
    expect(outcomes.filter((o) => o.error?.code === 'CIRCUIT_OPEN')).toHaveLength(9);
    expect(sinks.probe!.received).toHaveLength(4);
  });
});
