import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../support/poll.js';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { documentedOperations, urlOfUnknown, type DocumentedOperation } from '../support/documented-operations.js';
import { startGateway, type RunningGateway } from '../support/start-gateway.js';

/**
 * Nothing waits on a Redis known to be down (it waited the 5 s command timeout before): each call
 * is answered within this. A metrics scrape waits up to 1 s for the job queues' counts.
 */
const ANSWER_WITHIN_MS = 2_000;

/**
 * Every operation of the OpenAPI document while Redis is away: each answers a documented status
 * (a 503 STATE_UNAVAILABLE where it needs the store), never a 500, and promptly. The test gateway
 * turns an undocumented status or body into a 500 (response-check.ts).
 */
describe('every operation while Redis is away', () => {
  let redis: RunningRedis;
  let gw: RunningGateway;
  let operations: DocumentedOperation[];
  beforeAll(async () => {
    redis = await startRedisServer();
    const keys = [{ name: 'outage-admin', role: 'admin' as const, grants: [WILDCARD_GRANT] }];
    gw = await startGateway('redis', { state: { url: redis.url }, bus: { enabled: true }, auth: { enabled: true, file: credentialsFile({ keys }).file } });
    operations = await documentedOperations(gw.url);
    await redis.stop();
  });
  afterAll(async () => {
    await gw?.close();
    await redis?.stop();
  });

  it('answers every operation with a documented status, none a 500, each within seconds', async () => {
    const wrong: string[] = [];
    const statuses = new Map<number, number>();
    for (const { method, path, responses } of operations) {
      const url = urlOfUnknown(gw.url, path);
      const sendsBody = method !== 'get' && method !== 'delete';
      const called = Date.now();
      const res = await fetch(url, {
        method: method.toUpperCase(),
        headers: sendsBody ? { ...keyHeader('outage-admin'), 'content-type': 'application/json' } : keyHeader('outage-admin'),
        ...(sendsBody ? { body: '{}' } : {}),
        signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
      }).catch((err: Error) => err);
      const name = `${method.toUpperCase()} ${path}`;
      if (res instanceof Error) {
        wrong.push(`${name}: no answer within ${ANSWER_WITHIN_MS} ms (${res.name})`);
        continue;
      }
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 500 || !(String(res.status) in responses)) wrong.push(`${name} → ${res.status} ${text.slice(0, 200)} (${Date.now() - called} ms)`);
    }
    expect(wrong).toEqual([]);
    // The outage was really met: the operations that reach the store (most refuse an empty body first) were refused.
    expect(statuses.get(503) ?? 0).toBeGreaterThanOrEqual(25);
  }, 300_000);

  it('serves again once Redis is back: commands wait for a connection again', async () => {
    redis = await startRedisServer({ port: redis.port });
    const list = `${gw.url}/v1/chains?namespace=ns&tenant=t`;
    const status = await poll(
      'the store to answer again',
      async () => (await fetch(list, { headers: keyHeader('outage-admin') })).status,
      (s) => s === 200,
      { timeoutMs: 15_000 },
    );
    expect(status).toBe(200);
  });
});
