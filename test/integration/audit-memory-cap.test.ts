import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prometheusSample } from '../support/prometheus-text.js';
import { BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const CAP = 30_000;
const DISPATCHES = 80;

// audit.memory_max_bytes through HTTP: the memory backend keeps its records within the cap and
// shows it in /metrics; on Redis the cap does not apply and the gauge is absent.
describe.each(BACKENDS)('audit.memory_max_bytes (%s backend)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend, { audit: { memory_max_bytes: CAP } });
  });
  afterAll(() => gw.close());

  it('evicts the oldest records beyond the cap and reports the stored size', async () => {
    for (let i = 0; i < DISPATCHES; i++) {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant: 'capped', payload: { to: 'a@example.com', pad: 'x'.repeat(500 + i * 7) } }));
      expect(res.status).toBe(200);
    }
    const page = (await (await fetch(`${gw.url}/v1/audit?tenant=capped&namespace=payments&limit=1000`)).json()) as { records: unknown[] };
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    const stored = prometheusSample(metrics, 'sluice_memory_store_bytes{kind="audit"}');
    const evicted = prometheusSample(metrics, 'sluice_audit_evicted_total') ?? 0;
    if (backend === 'memory') {
      expect(stored).toBeGreaterThan(0);
      expect(stored).toBeLessThanOrEqual(CAP);
      expect(page.records.length).toBeLessThan(DISPATCHES);
      expect(evicted).toBe(DISPATCHES - page.records.length);
    } else {
      expect(stored).toBeUndefined();
      expect(page.records).toHaveLength(DISPATCHES);
      expect(evicted).toBe(0);
    }
  });
});
