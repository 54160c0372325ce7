import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { postJson, requestJson, sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

// A rule muted by an interval that does not exist yet: until one is created it simply allows.
const RULES = `
rules:
  - name: muted-by-interval
    priority: 1
    condition: { field: action.action_type, eq: quiet-hours }
    action: { type: allow }
    mute_time_intervals: [cluster-always]
`;

type Body = Record<string, unknown>;

/** The staleness bound under test: pub/sub alone must carry a change to the other replica this fast. */
const WITHIN_MS = 1000;

const PROD = { env: 'prod' };

describe('silences and time intervals across 2 replicas sharing Redis (pub/sub only: the generation polls are minutes apart)', () => {
  let cluster: Cluster;
  let a: string;
  let b: string;

  const dispatch = async (url: string, over: Body) => (await postJson(`${url}/v1/dispatch`, sampleAction(over))).body as Body;
  const labelled = (url: string, tenant: string, labels: Record<string, string> = PROD) => dispatch(url, { tenant, metadata: { labels } });
  const createSilence = async (url: string, tenant: string, over: Body = {}) => {
    const res = await postJson(`${url}/v1/silences`, {
      namespace: 'payments',
      tenant,
      matchers: [{ name: 'env', op: 'equal', value: 'prod' }],
      comment: 'cluster test',
      duration_seconds: 3600,
      ...over,
    });
    expect(res.status).toBe(201);
    return res.body as Body & { id: string; ends_at: string };
  };

  /** Waits (within the pub/sub bound) until replica B can read the silence. */
  const knownOnB = (id: string) =>
    poll(
      'replica B to know the silence',
      async () => (await requestJson('GET', `${b}/v1/silences/${id}`)).status,
      (s) => s === 200,
      {
        timeoutMs: WITHIN_MS,
        intervalMs: 25,
      },
    );

  beforeAll(async () => {
    cluster = await Cluster.start({
      apis: 2,
      workers: 0,
      config: {
        rules: { directory: rulesDir({ 'intervals.yaml': RULES }) },
        // Far longer than any wait below: a replica that relied on its poll would fail every bound.
        silences: { sync_interval_seconds: 60 },
        time_intervals: { sync_interval_seconds: 300 },
      },
    });
    const [first, second] = cluster.apis;
    if (!first || !second) throw new Error('the cluster needs 2 API replicas');
    a = first.url;
    b = second.url;
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('a silence created on replica A suppresses a matching dispatch on replica B within 1 s', async () => {
    expect(await labelled(b, 'sil-spread')).toMatchObject({ outcome: 'executed' });
    const created = await createSilence(a, 'sil-spread');
    const suppressedOnB = await poll(
      'replica B to apply the silence created on A',
      () => labelled(b, 'sil-spread'),
      (o) => o.outcome === 'suppressed',
      { timeoutMs: WITHIN_MS, intervalMs: 25 },
    );
    expect(suppressedOnB).toEqual({ outcome: 'suppressed', action_id: expect.any(String), rule: null, silence_id: created.id });
    // The matchers still decide: other labels, and a tenant outside the silence's line, go through on B.
    expect(await labelled(b, 'sil-spread', { env: 'dev' })).toMatchObject({ outcome: 'executed' });
    expect(await labelled(b, 'sil-spread-other')).toMatchObject({ outcome: 'executed' });
    // A child tenant is covered too.
    expect(await labelled(b, 'sil-spread.eu')).toMatchObject({ outcome: 'suppressed', silence_id: created.id });
  });

  it('keeps every extend when both replicas extend one silence at once: 20 concurrent extends move ends_at by exactly 20 minutes, as both replicas read', async () => {
    const created = await createSilence(a, 'sil-race');
    const original = Date.parse(created.ends_at);
    const endsAtPlus = (minutes: number) => new Date(original + minutes * 60_000).toISOString();
    // B must know the silence before it can extend it (its routes check the silence's scope on the snapshot).
    await knownOnB(created.id);
    /** Both replicas read ends_at = original + `minutes` (they converge by pub/sub; the generation poll is a minute away). */
    const bothRead = async (minutes: number) => {
      const expected = endsAtPlus(minutes);
      for (const [name, url] of [
        ['A', a],
        ['B', b],
      ] as const) {
        const endsAt = await poll(
          `replica ${name} to read ends_at ${expected} (original + ${minutes} min)`,
          async () => (await requestJson('GET', `${url}/v1/silences/${created.id}`)).body?.ends_at,
          (v) => v === expected,
          { timeoutMs: WITHIN_MS, intervalMs: 25 },
        );
        expect(endsAt).toBe(expected);
      }
    };
    const extendOn = (url: string) => postJson(`${url}/v1/silences/${created.id}/extend`, { minutes: 1 });

    // 10 to each replica, interleaved, all in flight together: every one counts (200).
    const targets = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b));
    const burst = await Promise.all(targets.map(extendOn));
    for (const r of burst) expect(r.status).toBe(200);
    // Every answer is a distinct step of one chain of compare-and-swaps: original + 1 … + 20 minutes.
    const steps = burst.map((r) => (Date.parse(String(r.body?.ends_at)) - original) / 60_000);
    expect(steps.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    await bothRead(20);
  });

  it('expiring a silence on replica B stops its suppression on replica A within 1 s', async () => {
    const created = await createSilence(a, 'sil-expire');
    expect(await labelled(a, 'sil-expire')).toMatchObject({ outcome: 'suppressed', silence_id: created.id });
    await knownOnB(created.id);
    const expired = await postJson(`${b}/v1/silences/${created.id}/expire`, {});
    expect(expired).toMatchObject({ status: 200, body: { id: created.id, active: false } });
    await poll(
      'replica A to stop applying the silence expired on B',
      () => labelled(a, 'sil-expire'),
      (o) => o.outcome === 'executed',
      {
        timeoutMs: WITHIN_MS,
        intervalMs: 25,
      },
    );
    expect((await requestJson('GET', `${a}/v1/silences/${created.id}`)).body).toMatchObject({ active: false, ends_at: expired.body?.ends_at });
  });

  it('a time interval created on replica A mutes a rule (mute_time_intervals) on replica B within 1 s', async () => {
    const quiet = (url: string, tenant = 'ti-acme') => dispatch(url, { tenant, action_type: 'quiet-hours' });
    // Without the interval the rule just allows, on both replicas.
    for (const url of [a, b]) expect(await quiet(url)).toMatchObject({ outcome: 'executed' });
    const created = await postJson(`${a}/v1/time-intervals`, { name: 'cluster-always', namespace: 'payments', tenant: 'ti-acme', time_ranges: [{}] });
    expect(created).toMatchObject({ status: 201, body: { name: 'cluster-always', matches_now: true } });
    const mutedOnB = await poll(
      'replica B to mute the rule with the interval created on A',
      () => quiet(b),
      (o) => o.outcome === 'suppressed',
      {
        timeoutMs: WITHIN_MS,
        intervalMs: 25,
      },
    );
    expect(mutedOnB).toEqual({
      outcome: 'suppressed',
      action_id: expect.any(String),
      rule: 'muted-by-interval',
      interval: 'cluster-always',
      reason: 'mute_time_interval',
    });
    // Looked up in the action's scope or a parent's: a child tenant is muted, another tenant is not.
    expect(await quiet(b, 'ti-acme.eu')).toMatchObject({ outcome: 'suppressed', interval: 'cluster-always' });
    expect(await quiet(b, 'ti-other')).toMatchObject({ outcome: 'executed' });
  });
});
