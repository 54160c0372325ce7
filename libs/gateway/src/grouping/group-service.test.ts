import { ManualClock, type Action, type FailureInfo } from '@sluice/core';
import { MemoryStateStore, type EnqueueOptions, type Job } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { InternalEventBus, type InternalEvent } from '../events/internal-events.js';
import type { ExecutionResult } from '../stages/execute-stage.js';
import { FLUSH_JOB_ATTEMPTS } from './group-notifier.js';
import { GROUP_FLUSH_KIND } from './group-keys.js';
import { GroupService, type GroupActionSpec } from './group-service.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const S = 1000;
const LEASE_MS = 20 * S;

/** Scheduler double: remembers jobs by id (a repeat is a no-op, like both real backends) and runs them when the clock says so. */
class FakeScheduler {
  readonly jobs = new Map<string, { kind: string; id: string; data: unknown; dueAt: number; runs: number }>();
  dropEnqueues = false;
  constructor(private readonly clock: ManualClock) {}
  async enqueue(kind: string, opts: EnqueueOptions): Promise<{ enqueued: boolean }> {
    if (this.dropEnqueues || this.jobs.has(`${kind}:${opts.id}`)) return { enqueued: false };
    this.jobs.set(`${kind}:${opts.id}`, { kind, id: opts.id, data: opts.data, dueAt: this.clock.now() + (opts.delayMs ?? 0), runs: 0 });
    return { enqueued: true };
  }
  /** Jobs due now that have not run yet, soonest first. */
  due(): { kind: string; id: string; data: unknown; runs: number }[] {
    return [...this.jobs.values()].filter((j) => j.runs === 0 && j.dueAt <= this.clock.now()).sort((a, b) => a.dueAt - b.dueAt);
  }
}

/** Provider double: records what was sent; `next` decides each call's result. */
class FakeProviders {
  readonly sent: Action[] = [];
  next: () => ExecutionResult | Promise<ExecutionResult> = () => ({ ok: true, response: { status: 'success', body: null, headers: {} }, attempts: 1 });
  readonly lookup = { get: (name: string) => (name === 'missing' ? undefined : name) };
  readonly executor = {
    execute: async (_provider: string, action: Action): Promise<ExecutionResult> => {
      this.sent.push(action);
      return this.next();
    },
  };
}

const failure = (retryable: boolean): ExecutionResult => ({
  ok: false,
  error: { code: 'EXECUTION_FAILED', message: 'boom', retryable, attempts: 1 } satisfies FailureInfo,
});

function setup() {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const state = new MemoryStateStore({ clock });
  const scheduler = new FakeScheduler(clock);
  const providers = new FakeProviders();
  const events: InternalEvent[] = [];
  const bus = new InternalEventBus();
  bus.on((e) => events.push(e));
  const flushes: string[] = [];
  let dropped = 0;
  const service = new GroupService<string>({
    state,
    scheduler,
    clock,
    providers: providers.lookup,
    executor: providers.executor,
    events: bus,
    logger,
    leaseMs: LEASE_MS,
    onFlush: (r) => flushes.push(r),
    onDropped: (count) => (dropped += count),
  });
  let n = 0;
  const action = (over: Partial<Action> = {}): Action => ({
    id: `a${++n}`,
    namespace: 'ns',
    tenant: 't',
    provider: 'hook',
    action_type: 'alert',
    payload: { cluster: 'c1', n },
    metadata: {},
    created_at: '',
    ...over,
  });
  const spec = (over: Partial<GroupActionSpec> = {}): GroupActionSpec => ({
    type: 'group',
    group_by: ['payload.cluster'],
    group_wait_seconds: 30,
    group_interval_seconds: 300,
    max_group_size: 100,
    ...over,
  });
  const add = (s: GroupActionSpec, over: Partial<Action> = {}) => service.add(action(over), over.provider ?? 'hook', 'grp', s);
  /** Runs every due flush job once, as a worker would (attempt 1); errors are returned, not thrown. */
  const runDue = async (): Promise<unknown[]> => {
    const errors: unknown[] = [];
    for (const job of scheduler.due()) {
      const entry = scheduler.jobs.get(`${job.kind}:${job.id}`)!;
      entry.runs += 1;
      await service
        .runFlushJob({ id: job.id, kind: job.kind, data: job.data, attempt: 1, lastTry: false, workerDeaths: 0 })
        .catch((err: unknown) => errors.push(err));
    }
    return errors;
  };
  const jobOf = (id: string, attempt = 1): Job => {
    const entry = [...scheduler.jobs.values()].find((j) => j.id === id);
    if (!entry) throw new Error(`no job ${id}`);
    return { id, kind: entry.kind, data: entry.data, attempt, lastTry: attempt >= FLUSH_JOB_ATTEMPTS, workerDeaths: 0 };
  };
  const payloadOf = (a: Action | undefined) =>
    a?.payload as { events: { action_id: string }[]; flush_reason: string; state: string; new_event_count: number; dropped_event_count: number };
  return { clock, state, scheduler, providers, events, flushes, service, add, spec, runDue, jobOf, payloadOf, dropped: () => dropped };
}

describe('GroupService', () => {
  it('the first event creates a pending group due group_wait later; later events never move notify_at', async () => {
    const { add, spec, clock, scheduler, service } = setup();
    const first = await add(spec());
    expect(first).toMatchObject({ outcome: 'grouped', group_size: 1, notify_at: new Date(clock.now() + 30 * S).toISOString() });
    clock.advance(20 * S);
    const second = await add(spec());
    expect(second).toMatchObject({ group_id: first.group_id, group_size: 2, notify_at: first.notify_at });
    // One job for the cycle, due at notify_at.
    expect([...scheduler.jobs.values()].map((j) => [j.kind, j.dueAt])).toEqual([[GROUP_FLUSH_KIND, Date.parse(first.notify_at)]]);
    const listed = await service.list({ limit: 100, offset: 0 });
    expect(listed).toMatchObject({ total: 1, groups: [{ group_id: first.group_id, state: 'pending', event_count: 2, notify_at: first.notify_at }] });
  });

  it('ephemeral: one consolidated notification at notify_at, then the group is gone and the next event starts a new cycle', async () => {
    const { add, spec, clock, runDue, providers, service, events, payloadOf, flushes } = setup();
    const first = await add(spec());
    await add(spec());
    const key = (await service.list({ limit: 1, offset: 0 })).groups[0]!.group_key;
    clock.advance(29 * S);
    await runDue();
    expect(providers.sent).toHaveLength(0);
    clock.advance(S);
    await runDue();
    expect(providers.sent).toHaveLength(1);
    const note = providers.sent[0]!;
    expect(note).toMatchObject({ id: `${first.group_id}:1`, provider: 'hook', action_type: 'alert', namespace: 'ns', tenant: 't' });
    expect(payloadOf(note)).toMatchObject({ flush_reason: 'group_wait', state: 'notified' });
    expect(payloadOf(note).events.map((e) => e.action_id)).toEqual(['a1', 'a2']);
    expect(events.map((e) => e.type)).toEqual(['group_flushed']);
    expect(events[0]?.data).toMatchObject({ group_id: first.group_id, event_count: 2 });
    expect(flushes).toEqual(['sent']);
    expect(await service.find(key)).toBeNull();
    expect((await service.list({ limit: 100, offset: 0 })).total).toBe(0);
    // The next event: a new group, a fresh group_wait.
    clock.advance(5 * S);
    const next = await add(spec());
    expect(next.group_id).not.toBe(first.group_id);
    expect(next).toMatchObject({ group_size: 1, notify_at: new Date(clock.now() + 30 * S).toISOString() });
  });

  it('reaching max_group_size flushes early, once; the oldest events are dropped (FIFO) until the flush runs', async () => {
    const { add, spec, clock, runDue, providers, payloadOf, dropped } = setup();
    const s = spec({ max_group_size: 3 });
    for (let i = 0; i < 3; i++) await add(s);
    // Not flushed yet (the job is due now); two more arrive and push the two oldest out.
    await add(s);
    const last = await add(s);
    expect(last.group_size).toBe(3);
    expect(dropped()).toBe(2);
    await runDue();
    expect(providers.sent).toHaveLength(1);
    expect(payloadOf(providers.sent[0])).toMatchObject({ flush_reason: 'max_group_size', dropped_event_count: 2 });
    expect(payloadOf(providers.sent[0]).events.map((e) => e.action_id)).toEqual(['a3', 'a4', 'a5']);
    // The original group_wait job finds a superseded cycle: no second notification.
    clock.advance(60 * S);
    await runDue();
    expect(providers.sent).toHaveLength(1);
  });

  it('persistent: re-batches new events after group_interval, re-fires on repeat_interval, resolves when idle', async () => {
    const { add, spec, clock, runDue, providers, service, events, payloadOf, flushes } = setup();
    const s = spec({ group_wait_seconds: 10, group_interval_seconds: 60, repeat_interval_seconds: 600 });
    const first = await add(s);
    const key = (await service.list({ limit: 1, offset: 0 })).groups[0]!.group_key;
    clock.advance(10 * S);
    await runDue();
    expect(providers.sent).toHaveLength(1);
    expect(await service.find(key)).toMatchObject({ state: 'notified', group_id: first.group_id, notify_at: new Date(clock.now() + 600 * S).toISOString() });

    // A new event: pending again, due group_interval after the last notification.
    clock.advance(20 * S);
    const again = await add(s);
    expect(again).toMatchObject({ group_id: first.group_id, group_size: 2, notify_at: new Date(clock.now() + 40 * S).toISOString() });
    clock.advance(40 * S);
    await runDue();
    expect(providers.sent).toHaveLength(2);
    expect(payloadOf(providers.sent[1])).toMatchObject({ flush_reason: 'group_interval', new_event_count: 1 });

    // No new events: one re-fire after repeat_interval...
    clock.advance(600 * S);
    await runDue();
    expect(providers.sent).toHaveLength(3);
    expect(payloadOf(providers.sent[2])).toMatchObject({ flush_reason: 'repeat_interval', new_event_count: 0 });
    // ...then idle: resolved without a notification.
    clock.advance(600 * S);
    await runDue();
    expect(providers.sent).toHaveLength(3);
    expect(await service.find(key)).toMatchObject({ state: 'resolved' });
    expect(events.map((e) => e.type)).toEqual(['group_flushed', 'group_flushed', 'group_flushed', 'group_resolved']);
    expect(flushes).toEqual(['sent', 'sent', 'sent', 'resolved']);
    // A resolved group is replaced by a new one on the next event.
    const fresh = await add(s);
    expect(fresh.group_id).not.toBe(first.group_id);
  });

  it('claims each (group, cycle) once: duplicate and concurrent deliveries of the flush job notify once', async () => {
    const { add, spec, clock, providers, scheduler, service, jobOf } = setup();
    await add(spec());
    clock.advance(30 * S);
    const [job] = scheduler.due();
    await Promise.all([service.runFlushJob(jobOf(job!.id)), service.runFlushJob(jobOf(job!.id)), service.runFlushJob(jobOf(job!.id, 2))]);
    await service.runFlushJob(jobOf(job!.id, 3));
    expect(providers.sent).toHaveLength(1);
  });

  it('30 concurrent appends make one group of 30 and one notification', async () => {
    const { add, spec, clock, runDue, providers, payloadOf } = setup();
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => add(spec())));
    expect(new Set(outcomes.map((o) => o.group_id)).size).toBe(1);
    expect(Math.max(...outcomes.map((o) => o.group_size))).toBe(30);
    clock.advance(30 * S);
    await runDue();
    expect(providers.sent).toHaveLength(1);
    expect(payloadOf(providers.sent[0]).events).toHaveLength(30);
  });

  it('a worker that dies mid-delivery: a retry waits for its lease, then sends once more under the same id', async () => {
    const { add, spec, clock, providers, scheduler, service, jobOf } = setup();
    await add(spec());
    clock.advance(30 * S);
    const [job] = scheduler.due();
    // The first worker claims and calls the provider, which never answers (the worker is killed).
    providers.next = () => new Promise<ExecutionResult>(() => {});
    void service.runFlushJob(jobOf(job!.id));
    await expect.poll(() => providers.sent.length).toBe(1);
    providers.next = () => ({ ok: true, response: { status: 'success', body: null, headers: {} }, attempts: 1 });
    // The retry on another worker: the lease is held, so it backs off without calling the provider.
    await expect(service.runFlushJob(jobOf(job!.id, 2))).rejects.toThrow(/being delivered/);
    expect(providers.sent).toHaveLength(1);
    // Once the lease expires, the retry delivers the claimed snapshot (never a second claim).
    clock.advance(LEASE_MS);
    await service.runFlushJob(jobOf(job!.id, 3));
    expect(providers.sent.map((a) => a.id)).toEqual([providers.sent[0]!.id, providers.sent[0]!.id]);
    await service.runFlushJob(jobOf(job!.id, 4));
    expect(providers.sent).toHaveLength(2);
  });

  it('a retryable provider failure is retried by the job; the last attempt abandons it', async () => {
    const { add, spec, clock, providers, scheduler, service, jobOf, flushes } = setup();
    await add(spec());
    clock.advance(30 * S);
    const [job] = scheduler.due();
    providers.next = () => failure(true);
    await expect(service.runFlushJob(jobOf(job!.id, 1))).rejects.toThrow('boom');
    await expect(service.runFlushJob(jobOf(job!.id, FLUSH_JOB_ATTEMPTS))).resolves.toBeUndefined();
    expect(providers.sent).toHaveLength(2);
    expect(flushes).toEqual(['failed']);
    await service.runFlushJob(jobOf(job!.id, FLUSH_JOB_ATTEMPTS));
    expect(providers.sent).toHaveLength(2);
  });

  it('a provider that does not exist fails the flush without retries', async () => {
    const { add, spec, clock, runDue, providers, flushes } = setup();
    await add(spec(), { provider: 'missing' });
    clock.advance(30 * S);
    expect(await runDue()).toEqual([]);
    expect(providers.sent).toHaveLength(0);
    expect(flushes).toEqual(['failed']);
  });

  it('DELETE flushes at once and closes; the scheduled flush and the backstop job then do nothing', async () => {
    const { add, spec, clock, runDue, providers, service, payloadOf } = setup();
    const first = await add(spec({ repeat_interval_seconds: 600 }));
    await add(spec({ repeat_interval_seconds: 600 }));
    const key = (await service.list({ limit: 1, offset: 0 })).groups[0]!.group_key;
    clock.advance(5 * S);
    const result = await service.close(key);
    expect(result).toEqual({ group_id: first.group_id, group_key: key, event_count: 2, status: 'flushed', notified: true });
    expect(providers.sent).toHaveLength(1);
    expect(payloadOf(providers.sent[0])).toMatchObject({ flush_reason: 'deleted', state: 'resolved' });
    expect(await service.find(key)).toBeNull();
    await expect(service.close(key)).rejects.toMatchObject({ statusCode: 404, message: `group not found: ${key}` });
    clock.advance(3600 * S);
    await runDue();
    expect(providers.sent).toHaveLength(1);
  });

  it('DELETE of an unknown key is 404; of a resolved group 409', async () => {
    const { add, spec, clock, runDue, service } = setup();
    await expect(service.close('nope')).rejects.toMatchObject({ statusCode: 404, message: 'group not found: nope' });
    await add(spec({ group_wait_seconds: 1, repeat_interval_seconds: 10 }));
    const key = (await service.list({ limit: 1, offset: 0 })).groups[0]!.group_key;
    for (let i = 0; i < 3; i++) {
      clock.advance(10 * S);
      await runDue();
    }
    expect(await service.find(key)).toMatchObject({ state: 'resolved' });
    await expect(service.close(key)).rejects.toMatchObject({ statusCode: 409 });
  });

  it('the sweep re-enqueues a flush whose enqueue was lost', async () => {
    const { add, spec, clock, runDue, providers, scheduler, service } = setup();
    scheduler.dropEnqueues = true; // the replica died between the append and the enqueue
    await add(spec());
    scheduler.dropEnqueues = false;
    clock.advance(30 * S);
    expect(await service.sweep(10 * S)).toBe(0);
    clock.advance(10 * S);
    expect(await service.sweep(10 * S)).toBe(1);
    await runDue();
    expect(providers.sent).toHaveLength(1);
  });

  it('lists with namespace, tenant, status and visibility filters, soonest first', async () => {
    const { add, spec, clock, runDue, service } = setup();
    await add(spec({ group_wait_seconds: 50 }), { tenant: 'a' });
    await add(spec({ group_wait_seconds: 10, repeat_interval_seconds: 600 }), { tenant: 'b' });
    await add(spec({ group_wait_seconds: 20 }), { namespace: 'other', tenant: 'a' });
    const all = await service.list({ limit: 100, offset: 0 });
    expect(all.groups.map((g) => `${g.namespace}/${g.tenant}`)).toEqual(['ns/b', 'other/a', 'ns/a']);
    expect((await service.list({ tenant: 'a', limit: 100, offset: 0 })).total).toBe(2);
    expect((await service.list({ namespace: 'ns', tenant: 'a', limit: 100, offset: 0 })).total).toBe(1);
    expect((await service.list({ limit: 100, offset: 0 }, (s) => s.tenant === 'b')).groups.map((g) => g.tenant)).toEqual(['b']);
    expect(await service.list({ limit: 1, offset: 1 })).toMatchObject({ total: 3, groups: [{ namespace: 'other' }] });
    clock.advance(10 * S);
    await runDue();
    expect((await service.list({ status: 'notified', limit: 100, offset: 0 })).groups.map((g) => g.tenant)).toEqual(['b']);
    expect((await service.list({ status: 'pending', limit: 100, offset: 0 })).total).toBe(2);
  });

  it('the full record by key carries labels, settings and events', async () => {
    const { add, spec, service } = setup();
    const outcome = await add(spec({ repeat_interval_seconds: 900, max_group_size: 7 }), { fingerprint: 'fp-1', status: 'firing' });
    const key = (await service.list({ limit: 1, offset: 0 })).groups[0]!.group_key;
    expect(await service.find(key)).toMatchObject({
      group_id: outcome.group_id,
      group_key: key,
      labels: { 'payload.cluster': 'c1' },
      state: 'pending',
      last_notified_at: null,
      group_wait_seconds: 30,
      group_interval_seconds: 300,
      repeat_interval_seconds: 900,
      max_group_size: 7,
      event_count: 1,
      events: [{ action_id: 'a1', fingerprint: 'fp-1', status: 'firing', payload: { cluster: 'c1', n: 1 } }],
    });
  });
});
