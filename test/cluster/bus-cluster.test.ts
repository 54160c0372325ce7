import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster } from './harness.js';

const SCOPE = { namespace: 'orders', tenant: 'acme' };
type Body = Record<string, unknown>;

async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

describe('cluster: the message bus (2 replicas)', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await Cluster.start({ apis: 2, workers: 0, config: { bus: { enabled: true, visibility_timeout_seconds: 1 } } });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('10 concurrent registrations of one subject on two processes get versions 1..10, each once', async () => {
    const [a, b] = cluster.apis as [NonNullable<(typeof cluster.apis)[0]>, NonNullable<(typeof cluster.apis)[0]>];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call((i % 2 ? a : b).url, 'POST', '/v1/bus/schemas', { ...SCOPE, subject: 'raced', body: { type: 'object' } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(results.map((r) => r.body.version as number).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  }, 30_000);

  it('a message taken by a consumer on a replica that is then killed goes to a consumer on the other', async () => {
    const [a, b] = cluster.apis as [NonNullable<(typeof cluster.apis)[0]>, NonNullable<(typeof cluster.apis)[0]>];
    await call(a.url, 'POST', '/v1/bus/topics', { ...SCOPE, name: 'work' });
    const sub = (await call(a.url, 'POST', '/v1/bus/subscriptions', { topic: 'orders.acme.work' })).body.id as string;
    await call(b.url, 'POST', '/v1/bus/publish', { topic: 'orders.acme.work', payload: { job: 1 } });
    const taken = (await call(a.url, 'GET', `/v1/bus/subscriptions/${sub}/messages?consumer=on-a`)).body.messages as Body[];
    expect(taken.map((m) => m.payload)).toEqual([{ job: 1 }]);

    a.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    const lag = (await call(b.url, 'GET', `/v1/bus/subscriptions/${sub}/lag`)).body;
    expect(lag).toMatchObject({ pending: 1, lag: 1 });
    const redelivered = (await call(b.url, 'GET', `/v1/bus/subscriptions/${sub}/messages?consumer=on-b&wait_seconds=5`)).body.messages as Body[];
    expect(redelivered).toEqual([expect.objectContaining({ message_id: taken[0]?.message_id, deliveries: 2, payload: { job: 1 } })]);
    expect((await call(b.url, 'POST', `/v1/bus/subscriptions/${sub}/ack`, { message_ids: [taken[0]?.message_id] })).body).toEqual({ acked: 1 });
    expect((await call(b.url, 'GET', `/v1/bus/subscriptions/${sub}/lag`)).body).toMatchObject({ lag: 0 });
  }, 30_000);
});
