import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { rulesDir } from '../support/rules-dir.js';
import { openStream, type SseStream } from '../support/sse-client.js';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

const LEASE_TTL_SECONDS = 2;
const RULES = `
rules:
  - { name: two-step, priority: 1, condition: { field: action.action_type, eq: two-step }, action: { type: chain, chain_name: two } }
`;

describe('cluster: the SSE stream (2 replicas, 1 worker)', () => {
  let cluster: Cluster;
  let sink: HttpSink;
  const streams: SseStream[] = [];

  beforeAll(async () => {
    sink = await startSink();
    cluster = await Cluster.start({
      apis: 2,
      workers: 1,
      config: {
        rules: { directory: rulesDir({ 'chains.yaml': RULES }) },
        providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
        chains: {
          definitions: [
            {
              name: 'two',
              steps: [
                { name: 's1', provider: 'hook', action_type: 'a' },
                { name: 's2', provider: 'hook', action_type: 'b' },
              ],
            },
          ],
        },
        server: { max_sse_connections_per_tenant: 2 },
        stream: { lease_ttl_seconds: LEASE_TTL_SECONDS },
      },
    });
  }, 60_000);
  afterAll(async () => {
    for (const s of streams) s.close();
    await cluster?.stop();
    await sink?.close();
  });

  it('a subscriber on one replica sees the worker’s chain steps and the other replica’s dispatches', async () => {
    const [a, b] = cluster.apis as [NonNullable<(typeof cluster.apis)[0]>, NonNullable<(typeof cluster.apis)[0]>];
    const s = await openStream(`${a.url}/v1/stream`);
    streams.push(s);
    // The worker learns of the subscriber from pub/sub (or its next one-second check).
    await new Promise((r) => setTimeout(r, 1200));
    const res = await fetch(`${b.url}/v1/dispatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sampleAction({ provider: 'hook', action_type: 'two-step' })),
    });
    const { chain_id, action_id } = (await res.json()) as { chain_id: string; action_id: string };
    await s.next((f) => f.event === 'action_dispatched' && f.data['action_id'] === action_id);
    await s.next((f) => f.event === 'chain_advanced' && f.data['chain_id'] === chain_id && f.data['step'] === 's2', 10_000);
  }, 30_000);

  it('a killed replica’s connections stop counting once their leases expire', async () => {
    for (const s of streams.splice(0)) s.close();
    await new Promise((r) => setTimeout(r, 200)); // the closes release their leases
    const [a, b] = cluster.apis as [NonNullable<(typeof cluster.apis)[0]>, NonNullable<(typeof cluster.apis)[0]>];
    const onA = await openStream(`${a.url}/v1/stream`);
    const onB = await openStream(`${b.url}/v1/stream`);
    streams.push(onA, onB);
    expect([onA.status, onB.status]).toEqual([200, 200]);
    expect((await openStream(`${b.url}/v1/stream`)).status).toBe(429);

    a.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    const killedAt = Date.now();
    let status = 429;
    while (status === 429 && Date.now() - killedAt < (LEASE_TTL_SECONDS + 3) * 1000) {
      const attempt = await openStream(`${b.url}/v1/stream`);
      streams.push(attempt);
      status = attempt.status;
      if (status === 429) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    // Not before the dead replica's lease could have expired (it was renewed at most a third of the TTL before the kill).
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(((LEASE_TTL_SECONDS * 2) / 3) * 1000 - 250);
  }, 30_000);
});
