import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniquePrefix } from '../support/redis-url.js';
import { openStream, type SseStream } from '../support/sse-client.js';
import { postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/** Long enough for an event that should not arrive to show up, not a timing assertion. */
const QUIET_MS = 500;

async function replicas(scope: 'cluster' | 'local'): Promise<[RunningGateway, RunningGateway]> {
  const config = { state: { prefix: uniquePrefix() }, stream: { scope }, server: { max_sse_connections_per_tenant: 2 } };
  return [await startGateway('redis', config), await startGateway('redis', config)];
}

const dispatchOn = async (gw: RunningGateway, tenant = 'acme') =>
  ((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'p', tenant }))).body as { action_id: string }).action_id;

describe.each(['cluster', 'local'] as const)('stream scope %s: two replicas on one Redis', (scope) => {
  let a: RunningGateway;
  let b: RunningGateway;
  const streams: SseStream[] = [];

  beforeAll(async () => {
    [a, b] = await replicas(scope);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await a.close();
    await b.close();
  });

  it(scope === 'cluster' ? 'a subscriber on A sees dispatches made on B' : 'a subscriber on A sees only A’s dispatches', async () => {
    const s = await openStream(`${a.url}/v1/stream`);
    streams.push(s);
    const onA = await dispatchOn(a);
    const onB = await dispatchOn(b);
    await s.next((f) => f.data['action_id'] === onA);
    if (scope === 'cluster') await s.next((f) => f.data['action_id'] === onB);
    else {
      await new Promise((r) => setTimeout(r, QUIET_MS));
      expect(s.frames.map((f) => f.data['action_id'])).toEqual([onA]);
    }
  });

  it('counts connections per tenant across replicas: six racing for two slots on two replicas, two get in', async () => {
    for (const s of streams.splice(0)) s.close();
    await new Promise((r) => setTimeout(r, 200)); // the closes give their slots back
    const racing = await Promise.all([a, b, a, b, a, b].map((gw) => openStream(`${gw.url}/v1/stream`)));
    streams.push(...racing);
    expect(racing.map((s) => s.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    expect((await openStream(`${b.url}/v1/stream`)).status).toBe(429);
  });
});
