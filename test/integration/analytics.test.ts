import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { ALL_BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Bucket = {
  timestamp: string;
  count: number;
  group?: string;
  error_rate?: number;
  avg_duration_ms?: number;
  p50_duration_ms?: number;
  p95_duration_ms?: number;
  p99_duration_ms?: number;
};
type Result = {
  metric: string;
  from: string;
  to: string;
  buckets: Bucket[];
  top_entries?: { label: string; count: number; percentage: number }[];
  total_count: number;
};

const CALLERS = [
  { name: 'root', role: 'admin' as const, grants: [WILDCARD_GRANT] },
  { name: 'acme-viewer', role: 'viewer' as const, grants: [{ tenants: ['acme'], namespaces: ['*'], actions: ['*'] }] },
  { name: 'two', role: 'viewer' as const, grants: [{ tenants: ['acme', 'initech'], namespaces: ['*'], actions: ['*'] }] },
];

describe.each(ALL_BACKENDS)('GET /v1/analytics (%s backend)', (backend) => {
  let gw: RunningGateway;
  const analytics = async (query: string, caller = 'root') => {
    const res = await fetch(`${gw.url}/v1/analytics?${query}`, { headers: keyHeader(caller) });
    return { status: res.status, body: (await res.json()) as Result & { code?: string } };
  };

  beforeAll(async () => {
    gw = await startGateway(backend, {
      auth: { enabled: true, file: credentialsFile({ keys: CALLERS }).file },
      providers: [
        { name: 'email', type: 'log' },
        { name: 'sms', type: 'log' },
      ],
    });
    const send = (over: Record<string, unknown>) => postJson(`${gw.url}/v1/dispatch`, sampleAction(over), keyHeader('root'));
    for (let i = 0; i < 6; i++) await send({ tenant: 'acme', action_type: i < 4 ? 'send' : 'notify' });
    await send({ tenant: 'acme.eu', provider: 'sms' });
    await send({ tenant: 'acme', provider: 'missing' }); // failed: PROVIDER_NOT_FOUND
    for (let i = 0; i < 3; i++) await send({ tenant: 'globex' });
    await postJson(`${gw.url}/v1/dispatch?dry_run=true`, sampleAction({ tenant: 'acme' }), keyHeader('root'));
  });
  afterAll(() => gw.close());

  it('counts volume in daily buckets, the spec fields it does not compute null', async () => {
    const { status, body } = await analytics('metric=volume');
    expect(status).toBe(200);
    expect(body.total_count).toBe(11);
    expect(body.buckets).toHaveLength(1);
    expect(body.buckets[0]?.count).toBe(11);
    expect(body.buckets[0]).toEqual({ timestamp: expect.any(String), count: 11, group: null, avg_duration_ms: null, error_rate: null });
    expect(body.top_entries).toEqual([]);
    expect(Date.parse(body.to) - Date.parse(body.from)).toBeGreaterThanOrEqual(7 * 24 * 3_600_000);
  });

  it('breaks down outcomes, computes the error rate and the latency percentiles', async () => {
    const breakdown = (await analytics('metric=outcome_breakdown&tenant=acme')).body;
    expect(Object.fromEntries(breakdown.buckets.map((b) => [b.group, b.count]))).toEqual({ executed: 6, failed: 1 });
    const errors = (await analytics('metric=error_rate&tenant=acme')).body;
    expect(errors.buckets[0]?.error_rate).toBeCloseTo(1 / 7, 10);
    const latency = (await analytics('metric=latency')).body.buckets[0];
    expect(latency?.avg_duration_ms).toBeGreaterThanOrEqual(0);
    expect(latency?.p50_duration_ms).toBeLessThanOrEqual(latency?.p95_duration_ms ?? -1);
    expect(latency?.p95_duration_ms).toBeLessThanOrEqual(latency?.p99_duration_ms ?? -1);
  });

  it('ranks action types and groups by any dimension', async () => {
    const top = (await analytics('metric=top_action_types&top_n=1')).body;
    expect(top.top_entries).toEqual([{ label: 'send', count: 9, percentage: (9 / 11) * 100 }]);
    const byProvider = (await analytics('metric=volume&group_by=provider')).body;
    expect(Object.fromEntries(byProvider.buckets.map((b) => [b.group, b.count]))).toEqual({ email: 9, sms: 1, missing: 1 });
  });

  it('scopes single-tenant callers and filters multi-tenant ones to their grants', async () => {
    expect((await analytics('metric=volume', 'acme-viewer')).body.total_count).toBe(7);
    expect((await analytics('metric=volume&tenant=globex', 'acme-viewer')).status).toBe(403);
    const two = (await analytics('metric=volume&group_by=tenant', 'two')).body;
    expect(Object.fromEntries(two.buckets.map((b) => [b.group, b.count]))).toEqual({ acme: 7, 'acme.eu': 1 });
  });

  it('refuses bad queries with 400', async () => {
    expect((await analytics('')).status).toBe(400);
    expect((await analytics('metric=volume&interval=yearly')).status).toBe(400);
    expect((await analytics('metric=volume&top_n=0')).status).toBe(400);
    expect((await analytics('metric=volume&from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
    expect((await analytics('metric=volume&interval=hourly&from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
  });
});
