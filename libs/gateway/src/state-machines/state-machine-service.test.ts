import { SluiceError, type RetentionPolicy } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { action, setup } from '../../test/state-machine-fixtures.js';
import { deriveFingerprint } from './fingerprint.js';
import { STATE_TIMEOUT_KIND } from './event-keys.js';
import { TimeoutNotVisibleError } from './state-machine-service.js';
import type { TimeoutJobData } from './state-timeouts.js';
import { runStateTimeoutJob } from './timeout-job.js';

const START = Date.UTC(2026, 2, 5, 14, 30);
const iso = (ms: number) => new Date(ms).toISOString();

async function rejects(p: Promise<unknown>, status: number, message: RegExp) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SluiceError);
  expect((err as SluiceError).statusCode).toBe(status);
  expect((err as SluiceError).message).toMatch(message);
}

describe('state_machine rule action: transitions', () => {
  it('records a new event in its initial state, arming that state’s timeout', async () => {
    const { service, scheduler, emitted } = setup();
    const a = action({ fingerprint: 'fp-1' });
    expect(await service.applyAction(a, 'alert', undefined)).toEqual({
      outcome: 'state_changed',
      action_id: a.id,
      fingerprint: 'fp-1',
      previous_state: 'open',
      new_state: 'open',
      notify: false,
    });
    expect(await service.get('ns', 't', 'fp-1')).toEqual({
      fingerprint: 'fp-1',
      namespace: 'ns',
      tenant: 't',
      state_machine: 'alert',
      state: 'open',
      action_type: 'alert',
      created_at: iso(START),
      updated_at: iso(START),
      transition_count: 0,
      version: 1,
      timeout_at: iso(START + 60_000),
    });
    const jobs = [...scheduler.pending.values()];
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      kind: STATE_TIMEOUT_KIND,
      delayMs: 60_000,
      data: { fingerprint: 'fp-1', state: 'open', version: 1, transition_to: 'escalated' },
    });
    expect(emitted).toEqual([]);
  });

  it('moves along an allowed transition: notify per transition, one version more, the old timeout cancelled', async () => {
    const { service, scheduler, emitted, clock } = setup();
    await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
    const [armed] = [...scheduler.pending.keys()];
    clock.advance(5000);
    const ack = action({ fingerprint: 'fp', status: 'acknowledged', action_type: 'ack' });
    expect(await service.applyAction(ack, 'alert', undefined)).toEqual({
      outcome: 'state_changed',
      action_id: ack.id,
      fingerprint: 'fp',
      previous_state: 'open',
      new_state: 'acknowledged',
      notify: true,
    });
    expect(await service.get('ns', 't', 'fp')).toMatchObject({
      state: 'acknowledged',
      version: 2,
      transition_count: 1,
      action_type: 'ack',
      updated_at: iso(START + 5000),
      timeout_at: null,
    });
    expect(scheduler.cancelled).toEqual([armed]);
    expect(scheduler.pending.size).toBe(0);
    expect(emitted).toEqual([
      {
        type: 'state_changed',
        namespace: 'ns',
        tenant: 't',
        at: iso(START + 5000),
        data: {
          fingerprint: 'fp',
          state_machine: 'alert',
          previous_state: 'open',
          new_state: 'acknowledged',
          notify: true,
          source: 'dispatch',
          version: 2,
          action_id: ack.id,
        },
      },
    ]);
  });

  it('leaves the event in place on a forbidden transition or an unknown state, and says so', async () => {
    const { service } = setup();
    await service.applyAction(action({ fingerprint: 'fp', status: 'acknowledged' }), 'alert', undefined);
    const back = action({ fingerprint: 'fp', status: 'open' });
    expect(await service.applyAction(back, 'alert', undefined)).toEqual({
      outcome: 'state_changed',
      action_id: back.id,
      fingerprint: 'fp',
      previous_state: 'acknowledged',
      new_state: 'acknowledged',
      notify: false,
      requested_state: 'open',
      reason: 'transition_not_allowed',
    });
    expect(await service.applyAction(action({ fingerprint: 'fp', status: 'bogus' }), 'alert', undefined)).toMatchObject({
      new_state: 'acknowledged',
      requested_state: 'bogus',
      reason: 'unknown_state',
    });
    // Same state, or no status at all: no change, nothing written.
    expect(await service.applyAction(action({ fingerprint: 'fp', status: 'acknowledged' }), 'alert', undefined)).not.toHaveProperty('reason');
    expect(await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined)).toMatchObject({
      previous_state: 'acknowledged',
      new_state: 'acknowledged',
    });
    expect(await service.get('ns', 't', 'fp')).toMatchObject({ state: 'acknowledged', version: 1, transition_count: 1 });
  });

  it('creates an event straight in a state reachable from the initial one', async () => {
    const { service, scheduler } = setup();
    expect(await service.applyAction(action({ fingerprint: 'fp', status: 'resolved' }), 'alert', undefined)).toMatchObject({
      previous_state: 'open',
      new_state: 'resolved',
      notify: false,
    });
    expect(await service.get('ns', 't', 'fp')).toMatchObject({ state: 'resolved', version: 1, transition_count: 1, timeout_at: null });
    expect(scheduler.pending.size).toBe(0);
  });

  it('derives the fingerprint from fingerprint_fields when the action has none', async () => {
    const { service } = setup();
    const fields = ['payload.host', 'metadata.cluster'];
    const first = action({ payload: { host: 'db-1' }, metadata: { labels: { cluster: 'eu' } } });
    const expected = deriveFingerprint(first, fields);
    expect(await service.applyAction(first, 'alert', fields)).toMatchObject({ fingerprint: expected, new_state: 'open' });
    const second = action({ payload: { host: 'db-1', extra: 1 }, metadata: { labels: { cluster: 'eu' } }, status: 'resolved' });
    expect(await service.applyAction(second, 'alert', fields)).toMatchObject({ fingerprint: expected, previous_state: 'open', new_state: 'resolved' });
    // An explicit fingerprint wins over the fields.
    expect(await service.applyAction({ ...second, fingerprint: 'own' }, 'alert', fields)).toMatchObject({ fingerprint: 'own' });
  });

  it('fails visibly without a fingerprint or with an unknown machine', async () => {
    const { service } = setup();
    expect(await service.applyAction(action(), 'alert', undefined)).toMatchObject({
      outcome: 'failed',
      error: { code: 'FINGERPRINT_REQUIRED', retryable: false },
    });
    expect(await service.applyAction(action({ fingerprint: 'x' }), 'nope', undefined)).toMatchObject({
      outcome: 'failed',
      error: { code: 'STATE_MACHINE_NOT_FOUND', message: 'state machine not found: nope' },
    });
  });

  it('settles concurrent transitions of one event to one consistent history', async () => {
    const { service } = setup();
    const targets = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'acknowledged' : 'resolved'));
    const outcomes = await Promise.all(targets.map((status) => service.applyAction(action({ fingerprint: 'race', status }), 'alert', undefined)));
    const moves = outcomes.flatMap((o) => (o.outcome === 'state_changed' && o.previous_state !== o.new_state ? [o] : []));
    const event = await service.get('ns', 't', 'race');
    expect(event?.transition_count).toBe(moves.length);
    // The moves chain from the initial state to the stored one, each state left exactly once.
    let at = 'open';
    for (let i = 0; i < moves.length; i++) {
      const next = moves.filter((m) => m.previous_state === at);
      expect(next).toHaveLength(1);
      at = next[0]!.new_state;
    }
    expect(at).toBe(event?.state);
  });
});

describe('PUT transition (service)', () => {
  it('404s an unknown event, 409s what the machine forbids, moves what it allows', async () => {
    const { service, emitted } = setup();
    await rejects(service.transition('ns', 't', 'missing', 'resolved'), 404, /event not found: missing/);
    await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
    await rejects(service.transition('ns', 't', 'fp', 'bogus'), 409, /unknown state bogus/);
    expect(await service.transition('ns', 't', 'fp', 'acknowledged')).toEqual({
      fingerprint: 'fp',
      previous_state: 'open',
      new_state: 'acknowledged',
      notify: true,
    });
    await rejects(service.transition('ns', 't', 'fp', 'open'), 409, /transition not allowed: acknowledged -> open/);
    expect(await service.transition('ns', 't', 'fp', 'acknowledged')).toEqual({
      fingerprint: 'fp',
      previous_state: 'acknowledged',
      new_state: 'acknowledged',
      notify: false,
    });
    expect(await service.get('ns', 't', 'fp')).toMatchObject({ state: 'acknowledged', version: 2, action_type: 'alert' });
    expect(emitted.map((e) => e.data.source)).toEqual(['api']);
  });
});

describe('state timeouts', () => {
  const firstJob = (scheduler: ReturnType<typeof setup>['scheduler']) => {
    const job = [...scheduler.pending.values()][0];
    if (!job) throw new Error('no timeout armed');
    return job.data as TimeoutJobData;
  };

  it('fires: moves the event on, reports a timeout, and arms the next state’s timeout', async () => {
    const { service, scheduler, clock, emitted } = setup();
    await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
    const job = firstJob(scheduler);
    clock.advance(60_000);
    expect(await service.fireTimeout(job)).toBe('fired');
    expect(await service.get('ns', 't', 'fp')).toMatchObject({ state: 'escalated', version: 2, transition_count: 1, timeout_at: iso(START + 180_000) });
    expect(emitted.map((e) => e.type)).toEqual(['timeout', 'state_changed']);
    expect(emitted[0]).toMatchObject({ data: { fingerprint: 'fp', state_machine: 'alert', previous_state: 'open', new_state: 'escalated' } });
    expect(emitted[1]).toMatchObject({ data: { source: 'timeout', notify: false } });
    const next = [...scheduler.pending.values()].find((j) => (j.data as TimeoutJobData).state === 'escalated');
    expect(next).toMatchObject({ delayMs: 120_000, data: { version: 2, transition_to: 'resolved' } });
  });

  it('fires once: a redelivered or concurrent run finds the stay over', async () => {
    const { service, scheduler, clock, emitted } = setup();
    await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
    const job = firstJob(scheduler);
    clock.advance(60_000);
    const runs = await Promise.all([service.fireTimeout(job), service.fireTimeout(job), service.fireTimeout(job)]);
    expect(runs.filter((r) => r === 'fired')).toHaveLength(1);
    expect(await service.fireTimeout(job)).toBe('stale');
    expect(emitted.filter((e) => e.type === 'timeout')).toHaveLength(1);
    expect(await service.get('ns', 't', 'fp')).toMatchObject({ state: 'escalated', version: 2 });
  });

  it('is superseded by a later transition: the job is cancelled, and a run that escaped does nothing', async () => {
    const { service, scheduler, clock, emitted } = setup();
    await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
    const job = firstJob(scheduler);
    clock.advance(30_000);
    await service.applyAction(action({ fingerprint: 'fp', status: 'acknowledged' }), 'alert', undefined);
    expect(scheduler.pending.size).toBe(0);
    clock.advance(30_000);
    expect(await service.fireTimeout(job)).toBe('stale');
    expect(await service.get('ns', 't', 'fp')).toMatchObject({ state: 'acknowledged', version: 2 });
    expect(emitted.some((e) => e.type === 'timeout')).toBe(false);
  });

  it('does nothing for a job armed by a write that lost its race, and retries one whose write is not visible yet', async () => {
    const { service, scheduler } = setup();
    await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
    const job = firstJob(scheduler);
    expect(await service.fireTimeout({ ...job, entered_at: iso(START - 1) })).toBe('stale');
    expect(await service.fireTimeout({ ...job, state: 'acknowledged' })).toBe('stale');
    await expect(service.fireTimeout({ ...job, version: 2 })).rejects.toBeInstanceOf(TimeoutNotVisibleError);
    await expect(service.fireTimeout({ ...job, fingerprint: 'other' })).rejects.toBeInstanceOf(TimeoutNotVisibleError);
  });

  it('runs as a worker job, refusing malformed data', async () => {
    const { service, scheduler, clock } = setup();
    await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
    const job = [...scheduler.pending.values()][0]!;
    clock.advance(60_000);
    await expect(
      runStateTimeoutJob(service, { id: job.id, kind: job.kind, data: { fingerprint: 'fp' }, attempt: 1, lastTry: false, workerDeaths: 0 }),
    ).rejects.toThrow(/malformed/);
    await runStateTimeoutJob(service, { id: job.id, kind: job.kind, data: job.data, attempt: 1, lastTry: false, workerDeaths: 0 });
    expect(await service.get('ns', 't', 'fp')).toMatchObject({ state: 'escalated' });
  });

  it('gives each stay its own job id, so re-entering a state arms a fresh timeout', async () => {
    const { service, scheduler, clock } = setup();
    await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
    clock.advance(60_000);
    await service.fireTimeout(firstJob(scheduler)); // open → escalated (v2), which arms its own job
    const ids = [...scheduler.pending.keys()];
    expect(ids).toHaveLength(2); // open (v1, ran) and escalated (v2, cancelled below) are distinct jobs
    await service.transition('ns', 't', 'fp', 'resolved');
    expect(scheduler.cancelled).toEqual([ids[1]]);
  });
});

describe('reads', () => {
  it('lists a tenant’s events most recently changed first, filtered by state and limited', async () => {
    const { service, clock } = setup();
    for (const fp of ['a', 'b', 'c']) {
      await service.applyAction(action({ fingerprint: fp }), 'alert', undefined);
      clock.advance(1000);
    }
    await service.applyAction(action({ fingerprint: 'a', status: 'resolved' }), 'alert', undefined);
    await service.applyAction(action({ fingerprint: 'z', tenant: 'other' }), 'alert', undefined);
    const all = await service.list('ns', 't', { limit: 100 });
    expect(all.events.map((e) => e.fingerprint)).toEqual(['a', 'c', 'b']);
    expect(all.count).toBe(3);
    expect((await service.list('ns', 't', { status: 'open', limit: 100 })).events.map((e) => e.fingerprint)).toEqual(['c', 'b']);
    expect((await service.list('ns', 't', { status: 'open', limit: 1 })).events.map((e) => e.fingerprint)).toEqual(['c']);
    expect((await service.list('ns', 't', { status: 'escalated', limit: 10 })).count).toBe(0);
  });

  it('gives rule conditions the current state of the event the action names', async () => {
    const { service } = setup();
    await service.applyAction(action({ fingerprint: 'fp', status: 'acknowledged' }), 'alert', undefined);
    expect(await service.currentState(action({ fingerprint: 'fp' }))).toBe('acknowledged');
    expect(await service.currentState(action({ fingerprint: 'unknown' }))).toBeUndefined();
    expect(await service.currentState(action())).toBeUndefined();
  });
});

describe('event retention', () => {
  const policy = (event_ttl_seconds?: number): RetentionPolicy => ({
    id: 'p',
    namespace: 'ns',
    tenant: 't',
    enabled: true,
    compliance_hold: false,
    created_at: iso(START),
    updated_at: iso(START),
    ...(event_ttl_seconds !== undefined ? { event_ttl_seconds } : {}),
  });

  it('deletes events resting in a terminal state past event_ttl_seconds, and nothing else', async () => {
    const { service, clock } = setup();
    await service.applyAction(action({ fingerprint: 'old-resolved', status: 'resolved' }), 'alert', undefined);
    await service.applyAction(action({ fingerprint: 'old-open' }), 'alert', undefined);
    clock.advance(50_000);
    await service.applyAction(action({ fingerprint: 'new-resolved', status: 'resolved' }), 'alert', undefined);
    clock.advance(20_000);
    const source = service.retentionSource();
    expect(await source.reap({ policy: policy(), nowMs: clock.now() })).toEqual({ deleted: 0, skippedCompliance: 0, errors: 0 });
    expect(await source.reap({ policy: policy(60), nowMs: clock.now() })).toEqual({ deleted: 1, skippedCompliance: 0, errors: 0 });
    expect(await service.get('ns', 't', 'old-resolved')).toBeNull();
    expect((await service.list('ns', 't', { limit: 10 })).events.map((e) => e.fingerprint).sort()).toEqual(['new-resolved', 'old-open']);
  });

  it('goes on where the last cycle’s budget ran out, so events that stay do not hide resolved ones behind them', async () => {
    const { service, clock } = setup();
    for (let i = 0; i < 5; i++) await service.applyAction(action({ fingerprint: `open-${i}` }), 'alert', undefined);
    clock.advance(1000);
    for (let i = 0; i < 2; i++) await service.applyAction(action({ fingerprint: `resolved-${i}`, status: 'resolved' }), 'alert', undefined);
    clock.advance(120_000);
    // Three entries a cycle: the five open events ahead would use up every cycle started afresh.
    const source = service.retentionSource({ maxScanned: 3 });
    const cycle = () => source.reap({ policy: policy(60), nowMs: clock.now() });
    expect(await cycle()).toMatchObject({ deleted: 0 });
    expect(await cycle()).toMatchObject({ deleted: 1 });
    expect(await cycle()).toMatchObject({ deleted: 1 });
    expect((await service.list('ns', 't', { limit: 10 })).events.map((e) => e.fingerprint).sort()).toEqual(['open-0', 'open-1', 'open-2', 'open-3', 'open-4']);
    // Past the end, the next cycle starts from the oldest again (open-0, resolved now, moved to the back).
    await service.applyAction(action({ fingerprint: 'open-0', status: 'resolved' }), 'alert', undefined);
    clock.advance(120_000);
    expect(await cycle()).toMatchObject({ deleted: 0 });
    expect(await cycle()).toMatchObject({ deleted: 1 });
    expect(await service.get('ns', 't', 'open-0')).toBeNull();
  });

  it('keeps the index entry of an event created again between its deletion’s two steps', async () => {
    const { service, clock, state } = setup();
    await service.applyAction(action({ fingerprint: 'fp', status: 'resolved' }), 'alert', undefined);
    clock.advance(120_000);
    // The record goes first, its index entry second: the new event lands in between.
    const deleteRecord = state.delete.bind(state);
    state.delete = async (key) => {
      const deleted = await deleteRecord(key);
      state.delete = deleteRecord;
      await service.applyAction(action({ fingerprint: 'fp' }), 'alert', undefined);
      return deleted;
    };
    expect(await service.retentionSource().reap({ policy: policy(60), nowMs: clock.now() })).toMatchObject({ deleted: 1 });
    expect((await service.list('ns', 't', { limit: 10 })).events.map((e) => [e.fingerprint, e.state])).toEqual([['fp', 'open']]);
  });
});
