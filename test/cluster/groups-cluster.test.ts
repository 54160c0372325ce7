import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

const RULES = `
rules:
  - name: by-cluster
    priority: 1
    condition: { field: action.action_type, eq: alert }
    action: { type: group, group_by: [payload.cluster], group_wait_seconds: 3 }
`;

/** Long enough for a duplicate delivery (a second claim, a retried job) to show up, not a timing assertion. */
const QUIET_MS = 2500;

type Grouped = { outcome: string; group_id: string; group_size: number; notify_at: string };

describe('cluster: event groups (3 replicas, 2 workers)', () => {
  let cluster: Cluster;
  let sink: HttpSink;
  const dispatch = async (over: Record<string, unknown>): Promise<Grouped> => {
    const api = cluster.nextApi();
    const res = await fetch(`${api.url}/v1/dispatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sampleAction({ provider: 'hook', action_type: 'alert', ...over })),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Grouped;
  };
  const notificationsFor = (groupId: string) => sink.received.filter((r) => r.metadata['group_id'] === groupId);

  beforeAll(async () => {
    sink = await startSink();
    cluster = await Cluster.start({
      apis: 3,
      workers: 2,
      config: {
        rules: { directory: rulesDir({ 'groups.yaml': RULES }) },
        providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
        executor: { max_retries: 0, timeout_seconds: 2 },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await sink?.close();
  });

  it('30 events for one key over 3 replicas make one group of 30 and one consolidated notification', async () => {
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => dispatch({ tenant: 'one-key', payload: { cluster: 'c1', i } })));
    expect(new Set(outcomes.map((o) => o.outcome))).toEqual(new Set(['grouped']));
    const groupId = outcomes[0]!.group_id;
    expect(new Set(outcomes.map((o) => o.group_id))).toEqual(new Set([groupId]));
    // Each append was atomic: every size from 1 to 30 was handed out exactly once.
    expect(outcomes.map((o) => o.group_size).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(new Set(outcomes.map((o) => o.notify_at)).size).toBe(1);

    await poll('the consolidated notification', () => notificationsFor(groupId).length > 0, { timeoutMs: 30_000, intervalMs: 50 });
    await new Promise((r) => setTimeout(r, QUIET_MS));
    const notes = notificationsFor(groupId);
    expect(notes).toHaveLength(1);
    expect((notes[0]?.payload['events'] as unknown[] | undefined)?.length).toBe(30);
  }, 90_000);

  it('a worker SIGKILLed while groups are pending: each group is still flushed exactly once', async () => {
    const clusters = Array.from({ length: 10 }, (_, i) => `k${i}`);
    const outcomes = await Promise.all(clusters.flatMap((c) => [0, 1, 2].map((i) => dispatch({ tenant: 'kill', payload: { cluster: c, i } }))));
    const groupIds = [...new Set(outcomes.map((o) => o.group_id))];
    expect(groupIds).toHaveLength(10);

    const victim = cluster.workers[0]!;
    victim.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');
    // Groups created after the kill are flushed by the survivor too.
    const late = await Promise.all([0, 1].map((i) => dispatch({ tenant: 'kill', payload: { cluster: 'after-kill', i } })));
    groupIds.push(late[0]!.group_id);

    await poll('every group flushed', () => groupIds.every((id) => notificationsFor(id).length > 0), { timeoutMs: 60_000, intervalMs: 50 });
    await new Promise((r) => setTimeout(r, QUIET_MS));
    expect(groupIds.map((id) => notificationsFor(id).length)).toEqual(groupIds.map(() => 1));
    for (const id of groupIds.slice(0, 10)) expect((notificationsFor(id)[0]?.payload['events'] as unknown[] | undefined)?.length).toBe(3);
  }, 120_000);
});
