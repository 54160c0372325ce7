import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster, REDIS_DEPLOYMENTS } from './harness.js';

describe.each(REDIS_DEPLOYMENTS)('cluster: 3 API replicas + 1 worker on one Redis (%s Redis)', (redis) => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({ redis, apis: 3, workers: 1 });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('serves dispatches from every replica', async () => {
    const seen = new Map<string, number>();
    for (let i = 0; i < 60; i += 1) {
      const api = cluster.nextApi();
      const res = await fetch(`${api.url}/v1/dispatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(sampleAction({ id: `c-${i}` })),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ outcome: 'executed', action_id: `c-${i}` });
      seen.set(api.url, (seen.get(api.url) ?? 0) + 1);
    }
    expect(seen.size).toBe(3);
  });

  it('runs a worker that is ready and scrapeable', async () => {
    const worker = cluster.workers[0];
    expect(worker).toBeDefined();
    expect((await fetch(`${worker?.url}/ready`)).status).toBe(200);
    expect(await (await fetch(`${worker?.url}/metrics`)).text()).toMatch(/sluice_process_cpu_seconds_total/);
  });

  it('reports every replica ready against Redis', async () => {
    for (const api of cluster.apis) expect((await fetch(`${api.url}/ready`)).status).toBe(200);
  });
});
