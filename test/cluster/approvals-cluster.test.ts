import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { rulesDir } from '../support/rules-dir.js';
import { postJson, sampleAction } from '../support/start-gateway.js';
import { Cluster, REDIS_DEPLOYMENTS } from './harness.js';

const RULES = `
rules:
  - { name: needs-approval, priority: 1, condition: { field: action.action_type, eq: wire }, action: { type: require_approval, ttl_seconds: 3600 } }
`;
const EXTERNAL = 'https://sluice.example';

describe.each(REDIS_DEPLOYMENTS)('approvals across 2 replicas sharing Redis (%s Redis)', (redis) => {
  let cluster: Cluster;
  let sink: HttpSink;
  let a: string;
  let b: string;

  beforeAll(async () => {
    sink = await startSink();
    // No approval_keys: the replicas must agree on the random key kept in Redis.
    cluster = await Cluster.start({
      redis,
      apis: 2,
      workers: 0,
      config: {
        providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
        rules: { directory: rulesDir({ 'approvals.yaml': RULES }) },
        server: { external_url: EXTERNAL },
      },
    });
    const [first, second] = cluster.apis;
    if (!first || !second) throw new Error('the cluster needs 2 API replicas');
    a = first.url;
    b = second.url;
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await sink?.close();
  });

  it('settles approve (replica A) racing reject (replica B) 50 times: one decision each time, at most one execution', async () => {
    let approvals = 0;
    for (let i = 0; i < 50; i++) {
      const pending = (await postJson(`${i % 2 ? a : b}/v1/dispatch`, sampleAction({ action_type: 'wire', provider: 'hook' }))).body as {
        action_id: string;
        approve_url: string;
        reject_url: string;
      };
      const answers = await Promise.all([
        postJson(pending.approve_url.replace(EXTERNAL, a), undefined),
        postJson(pending.reject_url.replace(EXTERNAL, b), undefined),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 410]);
      const approved = answers.some((r) => r.body?.status === 'approved');
      if (approved) approvals++;
      expect(sink.received.filter((c) => c.id === pending.action_id)).toHaveLength(approved ? 1 : 0);
    }
    // Both sides win some of the races (otherwise the race was not run at all).
    expect(approvals).toBeGreaterThan(0);
  });

  it('settles a signed-link approve (replica A) racing a caller decision (replica B) 30 times: exactly one execution each time', async () => {
    for (let i = 0; i < 30; i++) {
      const pending = (await postJson(`${a}/v1/dispatch`, sampleAction({ action_type: 'wire', provider: 'hook' }))).body as {
        action_id: string;
        approval_id: string;
        approve_url: string;
      };
      const [link, caller] = await Promise.all([
        postJson(pending.approve_url.replace(EXTERNAL, a), undefined),
        postJson(`${b}/v1/approvals/payments/acme/${pending.approval_id}/decision`, { decision: 'approve' }),
      ]);
      expect([link.status, caller.status].sort()).toEqual([200, 410]);
      expect(sink.received.filter((c) => c.id === pending.action_id)).toHaveLength(1);
    }
  });
});
