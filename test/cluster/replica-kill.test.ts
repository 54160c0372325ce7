import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

const TOTAL = 3000;
const CONCURRENCY = 24;
const KILL_AT = 1000;

/** Records the id of every action a provider call delivered. */
async function startSink(): Promise<{ url: string; ids: Set<string>; server: Server }> {
  const ids = new Set<string>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      ids.add((JSON.parse(body) as { id: string }).id);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, ids, server };
}

describe('cluster: a replica SIGKILLed under load', () => {
  let cluster: Cluster;
  let sink: Awaited<ReturnType<typeof startSink>>;
  beforeAll(async () => {
    sink = await startSink();
    cluster = await Cluster.start({
      apis: 3,
      workers: 1,
      config: { providers: [{ name: 'hook', type: 'webhook', url: sink.url }], executor: { max_retries: 0 } },
    });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    sink?.server.close();
  });

  it('loses nothing it answered 2xx, and the survivors keep serving', async () => {
    const victim = cluster.apis[1];
    if (!victim) throw new Error('need three replicas');
    const answered: { id: string; target: string; afterKill: boolean }[] = [];
    const failures: { target: string; afterKill: boolean }[] = [];
    let sent = 0;
    let killed = false;

    const lane = async () => {
      while (sent < TOTAL) {
        const i = sent++;
        if (i === KILL_AT) {
          victim.kill('SIGKILL');
          killed = true;
        }
        const api = cluster.nextApi();
        const id = `kill-${i}`;
        try {
          const res = await fetch(`${api.url}/v1/dispatch`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(sampleAction({ id, provider: 'hook' })),
          });
          const body = (await res.json()) as { outcome?: string };
          if (res.status >= 200 && res.status < 300 && body.outcome === 'executed') answered.push({ id, target: api.url, afterKill: killed });
          else failures.push({ target: api.url, afterKill: killed });
        } catch {
          failures.push({ target: api.url, afterKill: killed });
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));

    // Every 2xx was fully processed: its provider call reached the sink.
    const lost = answered.filter((a) => !sink.ids.has(a.id));
    expect(lost).toEqual([]);
    // Only the killed replica failed anyone, and only once it was being killed.
    expect(failures.every((f) => f.target === victim.url && f.afterKill)).toBe(true);
    // The two survivors answered everything sent to them after the kill.
    const survivorsAfterKill = answered.filter((a) => a.afterKill && a.target !== victim.url).length;
    expect(survivorsAfterKill).toBeGreaterThan(((TOTAL - KILL_AT) * 2) / 3 - CONCURRENCY);
    expect((await victim.exited).signal).toBe('SIGKILL');

    // And every 2xx has its audit record, whichever replica answered.
    const survivor = cluster.apis.find((a) => a !== victim);
    if (!survivor) throw new Error('no survivor');
    const missing: string[] = [];
    for (const { id } of answered) {
      const res = await fetch(`${survivor.url}/v1/audit/${id}`);
      if (res.status !== 200 || ((await res.json()) as { outcome?: string }).outcome !== 'executed') missing.push(id);
    }
    expect(missing).toEqual([]);

    // Index entries and rollups are deferred writes: the victim's queued ones were applied by the
    // survivors, each exactly once, so the audit index and the analytics agree on the count.
    const page = (await (await fetch(`${survivor.url}/v1/audit?namespace=payments&tenant=acme&limit=1`)).json()) as { total?: number };
    const volume = (await (await fetch(`${survivor.url}/v1/analytics?metric=volume&namespace=payments&tenant=acme`)).json()) as { total_count: number };
    expect(page.total).toBeGreaterThanOrEqual(answered.length);
    expect(page.total).toBeLessThanOrEqual(TOTAL);
    expect(volume.total_count).toBe(page.total);
  }, 180_000);
});
