import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { sampleAction } from '../support/start-gateway.js';
import { Cluster } from './harness.js';

const RULES = `
rules:
  - name: track-toggle
    priority: 1
    condition: { field: action.action_type, eq: toggle }
    action: { type: state_machine, state_machine: toggle }
  - name: track-ticket
    priority: 2
    condition: { field: action.action_type, eq: ticket }
    action: { type: state_machine, state_machine: ticket }
  - name: track-probe
    priority: 3
    condition: { field: action.action_type, eq: probe }
    action: { type: state_machine, state_machine: probe }
`;

const STATE_MACHINES = [
  // Both moves always allowed, so every request either moves the event or finds it already there.
  {
    name: 'toggle',
    initial_state: 'a',
    states: ['a', 'b'],
    transitions: [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'a' },
    ],
  },
  {
    name: 'ticket',
    initial_state: 'new',
    states: ['new', 'stale', 'closed'],
    transitions: [{ from: 'new', to: 'closed' }],
    timeouts: [{ state: 'new', after_seconds: 1, transition_to: 'stale' }],
  },
  // Times out two seconds after a ticket would: it closes the window in which a duplicate ticket timeout, or its retry after the 1 s backoff, would show.
  { name: 'probe', initial_state: 'new', states: ['new', 'stale'], transitions: [], timeouts: [{ state: 'new', after_seconds: 3, transition_to: 'stale' }] },
];

type Json = Record<string, unknown>;

async function call(method: string, url: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
}

async function getEvent(url: string, fp: string): Promise<Json> {
  return (await (await fetch(`${url}/v1/events/${fp}?namespace=payments&tenant=acme`)).json()) as Json;
}

/** Sum of one counter over the given processes' Prometheus /metrics. */
async function counterSum(urls: string[], pattern: RegExp): Promise<number> {
  const texts = await Promise.all(urls.map(async (u) => (await fetch(`${u}/metrics`, { headers: { accept: 'text/plain' } })).text()));
  return texts.reduce((sum, text) => sum + Number(pattern.exec(text)?.[1] ?? 0), 0);
}

describe('state machines across 3 replicas and 2 workers', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await Cluster.start({ apis: 3, workers: 2, config: { rules: { directory: rulesDir({ 'rules.yaml': RULES }) }, state_machines: STATE_MACHINES } });
  }, 90_000);
  afterAll(() => cluster?.stop());

  it('settles 40 concurrent transitions of one event from every replica to one move per version', async () => {
    const create = await call('POST', `${cluster.nextApi().url}/v1/dispatch`, sampleAction({ tenant: 'acme', action_type: 'toggle', fingerprint: 'race' }));
    expect(create.body).toMatchObject({ outcome: 'state_changed', new_state: 'a' });
    // Half by dispatch (target = status), half by PUT; targets alternate.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const target = i % 2 === 0 ? 'b' : 'a';
        const url = cluster.nextApi().url;
        return i % 4 < 2
          ? call('POST', `${url}/v1/dispatch`, sampleAction({ tenant: 'acme', action_type: 'toggle', fingerprint: 'race', status: target }))
          : call('PUT', `${url}/v1/events/race/transition`, { namespace: 'payments', tenant: 'acme', to: target });
      }),
    );
    for (const r of results) expect(r.status).toBe(200);
    const moves = results.map((r) => r.body).filter((b) => b.previous_state !== b.new_state);
    const toB = moves.filter((m) => m.new_state === 'b').length;
    const toA = moves.length - toB;
    const stored = await getEvent(cluster.nextApi().url, 'race');
    // Every reported move is one stored version: a lost update would report more moves than versions.
    expect(stored.transition_count).toBe(moves.length);
    expect(stored.version).toBe(1 + moves.length);
    // Moves alternate a→b, b→a from a, so the counts differ by at most one and fix the final state.
    expect(toB - toA === 0 || toB - toA === 1).toBe(true);
    expect(stored.state).toBe(toB > toA ? 'b' : 'a');
    // Every replica reads the same record.
    for (const api of cluster.apis) expect(await getEvent(api.url, 'race')).toEqual(stored);
  });

  it('fires each state-machine timeout exactly once across 2 workers', async () => {
    const workerUrls = cluster.workers.map((w) => w.url);
    const timeoutsFired = () => counterSum(workerUrls, /^sluice_internal_events_total\{type="timeout"\} (\d+)/m);
    const before = await timeoutsFired();
    const fps = Array.from({ length: 5 }, (_, i) => `tk-${i}`);
    // Every event is created concurrently from all three replicas: one write wins, the others find it there.
    await Promise.all(
      fps.flatMap((fp) =>
        cluster.apis.map((api) => call('POST', `${api.url}/v1/dispatch`, sampleAction({ tenant: 'acme', action_type: 'ticket', fingerprint: fp }))),
      ),
    );
    // One more event leaves its timed state first: its timeout must not fire.
    await call('POST', `${cluster.nextApi().url}/v1/dispatch`, sampleAction({ tenant: 'acme', action_type: 'ticket', fingerprint: 'tk-closed' }));
    await call('PUT', `${cluster.nextApi().url}/v1/events/tk-closed/transition`, { namespace: 'payments', tenant: 'acme', to: 'closed' });
    // Its timeout falls due two seconds after the tickets': once it fired, a duplicate run of theirs
    // (there must be none), a retry after the 1 s backoff included, has had its turn.
    await call('POST', `${cluster.nextApi().url}/v1/dispatch`, sampleAction({ tenant: 'acme', action_type: 'probe', fingerprint: 'probe' }));
    const timed = [...fps, 'probe'];
    const states = () => Promise.all(timed.map(async (fp) => (await getEvent(cluster.nextApi().url, fp)).state));
    await poll('every timeout to fire', states, (all) => all.every((state) => state === 'stale'), { timeoutMs: 15_000, intervalMs: 100 });
    // The counters are scraped from the workers, which count a timeout just after its transition.
    const fired = await poll(
      'the timeout counters',
      async () => (await timeoutsFired()) - before,
      (n) => n >= timed.length,
      { timeoutMs: 5000, intervalMs: 100 },
    );
    expect(fired).toBe(timed.length);
    for (const fp of fps) expect(await getEvent(cluster.nextApi().url, fp)).toMatchObject({ state: 'stale', version: 2, transition_count: 1 });
    expect(await getEvent(cluster.nextApi().url, 'tk-closed')).toMatchObject({ state: 'closed', version: 2 });
  });
});
