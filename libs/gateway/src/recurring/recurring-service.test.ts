import { ManualClock, RecurringCreateInput, RecurringUpdateInput, SluiceError, type ActionInput, type DispatchOutcome } from '@sluice/core';
import { MemoryStateStore, RedisStateStore, type EnqueueOptions, type RepeatOptions, type Scheduler, type StateStore } from '@sluice/state';
import { createLogger } from '@sluice/telemetry';
import { afterAll, describe, expect, it } from 'vitest';
import { racingStore } from '../../../../test/support/racing-store.js';
import { testRedisUrl, uniquePrefix } from '../../../../test/support/redis-url.js';
import { InternalEventBus, type InternalEvent } from '../events/internal-events.js';
import { RecurringService } from './recurring-service.js';
import { RECURRING_FIRE_KIND, scheduleId } from './recurring-keys.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const at = (iso: string) => Date.parse(iso);
const scope = { namespace: 'ns', tenant: 't' };

/** A Scheduler that only remembers which schedules are declared. */
class RecordingScheduler implements Scheduler {
  readonly backend = 'memory' as const;
  readonly schedules = new Map<string, RepeatOptions>();
  async enqueue(_kind: string, _opts: EnqueueOptions) {
    return { enqueued: true };
  }
  async repeat(kind: string, opts: RepeatOptions) {
    this.schedules.set(`${kind}/${opts.id}`, opts);
  }
  async cancel(kind: string, id: string) {
    return this.schedules.delete(`${kind}/${id}`);
  }
  consume(): void {}
  async start() {}
  async close() {}
  async jobCounts() {
    return [];
  }
  of(id: string): RepeatOptions | undefined {
    return this.schedules.get(`${RECURRING_FIRE_KIND}/${scheduleId(id)}`);
  }
}

/** Stands in for the gateway: counts what each occurrence dispatched. */
class RecordingGateway {
  readonly dispatched: { action: ActionInput; caller: string | undefined }[] = [];
  async dispatch(action: ActionInput, opts: { caller?: { id: string } | undefined } = {}): Promise<DispatchOutcome> {
    // Yield, so concurrent deliveries really interleave.
    await new Promise((r) => setImmediate(r));
    this.dispatched.push({ action, caller: opts.caller?.id });
    return { outcome: 'executed', action_id: action.id ?? '', response: { status: 'success', body: null, headers: {} } } as DispatchOutcome;
  }
}

/** A RecurringService whose occurrence jobs dispatch through the recording gateway (the worker passes its gateway to each job). */
type TestService = Omit<RecurringService, 'fire'> & { fire(data: unknown): ReturnType<RecurringService['fire']> };

interface Setup {
  state: StateStore;
  clock: ManualClock;
  scheduler: RecordingScheduler;
  gateway: RecordingGateway;
  events: InternalEvent[];
  service: TestService;
  /** Another process (worker) on the same state. */
  peer(): TestService;
}

const stores: StateStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
});

async function setup(backend: 'memory' | 'redis', opts: { max?: number; start?: string } = {}): Promise<Setup> {
  const clock = new ManualClock(at(opts.start ?? '2026-01-01T00:00:00Z'));
  const state = backend === 'memory' ? new MemoryStateStore({ clock }) : await RedisStateStore.connect({ url: testRedisUrl(), prefix: uniquePrefix() });
  stores.push(state);
  const scheduler = new RecordingScheduler();
  const gateway = new RecordingGateway();
  const events: InternalEvent[] = [];
  const bus = new InternalEventBus();
  bus.on((e) => events.push(e));
  const make = (): TestService => {
    const service = new RecurringService({ state, scheduler, clock, logger, events: bus, maxPerTenant: opts.max ?? 100, allowSecondsCron: false });
    const fire = service.fire.bind(service);
    return Object.assign(service, { fire: (data: unknown) => fire(data, gateway) });
  };
  return { state, clock, scheduler, gateway, events, service: make(), peer: make };
}

const input = (over: Record<string, unknown> = {}) =>
  RecurringCreateInput.parse({ cron_expr: '*/5 * * * *', provider: 'email', action_type: 'send', payload: { to: 'a@example.com' }, ...over });

async function rejects(p: Promise<unknown>, status: number, message?: RegExp) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SluiceError);
  expect((err as SluiceError).statusCode).toBe(status);
  if (message) expect((err as SluiceError).message).toMatch(message);
}

describe.each(['memory', 'redis'] as const)('RecurringService (%s)', (backend) => {
  it('creates an enabled action with its first execution and declares its schedule', async () => {
    const { service, scheduler } = await setup(backend);
    const created = await service.create(input({ timezone: 'Europe/Berlin', description: 'ping', max_executions: 3, labels: {} }), scope);
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      namespace: 'ns',
      tenant: 't',
      cron_expr: '*/5 * * * *',
      timezone: 'Europe/Berlin',
      enabled: true,
      provider: 'email',
      action_type: 'send',
      payload: { to: 'a@example.com' },
      metadata: {},
      next_execution: '2026-01-01T00:05:00.000Z',
      last_executed_at: null,
      max_executions: 3,
      execution_count: 0,
      description: 'ping',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    });
    expect(await service.get(scope, created.id)).toEqual(created);
    expect(scheduler.of(created.id)).toEqual({
      id: scheduleId(created.id),
      cron: '*/5 * * * *',
      timezone: 'Europe/Berlin',
      data: { namespace: 'ns', tenant: 't', id: created.id },
    });
    await rejects(service.get({ namespace: 'ns', tenant: 'other' }, created.id), 404, new RegExp(`^recurring action not found: ${created.id}$`));
  });

  it('computes next_execution in the zone across DST (09:00 New York, before and after the March change)', async () => {
    const { service, clock } = await setup(backend, { start: '2026-03-07T15:00:00Z' });
    const created = await service.create(input({ cron_expr: '0 9 * * *', timezone: 'America/New_York' }), scope);
    expect(created.next_execution).toBe('2026-03-08T13:00:00.000Z'); // EDT from that morning
    clock.set(at('2026-03-08T13:00:00.100Z'));
    expect(await service.fire({ ...scope, id: created.id })).toBe('fired');
    expect((await service.get(scope, created.id)).next_execution).toBe('2026-03-09T13:00:00.000Z');
  });

  it('refuses a missing cron, a bad cron or zone, aliases that disagree, and a schedule that never fires (400)', async () => {
    const { service } = await setup(backend);
    await rejects(service.create(input({ cron_expr: undefined }), scope), 400, /cron_expr is required/);
    await rejects(service.create(input({ cron_expr: '* * *' }), scope), 400, /invalid cron expression/);
    await rejects(service.create(input({ timezone: 'Nowhere/City' }), scope), 400, /invalid timezone/);
    await rejects(service.create(input({ cron_expr: '0 * * * *', cron_expression: '5 * * * *' }), scope), 400, /disagree/);
    await rejects(service.create(input({ end_date: '2026-01-01T00:01:00Z' }), scope), 400, /no execution before end_date/);
    const viaAlias = await service.create(input({ cron_expr: undefined, cron_expression: '0 * * * *', ends_at: '2026-02-01T01:00:00+01:00' }), scope);
    expect(viaAlias).toMatchObject({ cron_expr: '0 * * * *', ends_at: '2026-02-01T00:00:00.000Z' });
  });

  it('pauses and resumes: 409 on a double pause or resume, schedule cancelled and re-declared, next recomputed from now', async () => {
    const { service, scheduler, clock } = await setup(backend);
    const { id } = await service.create(input(), scope);
    const paused = await service.pause(scope, id);
    expect(paused).toMatchObject({ enabled: false, next_execution: null });
    expect(scheduler.of(id)).toBeUndefined();
    await rejects(service.pause(scope, id), 409, /^recurring action is already paused$/);
    clock.set(at('2026-01-01T01:02:00Z'));
    expect(await service.fire({ ...scope, id })).toBe('disabled'); // a delivery that was already queued does nothing
    const resumed = await service.resume(scope, id);
    expect(resumed).toMatchObject({ enabled: true, next_execution: '2026-01-01T01:05:00.000Z', updated_at: '2026-01-01T01:02:00.000Z' });
    expect(scheduler.of(id)).toMatchObject({ cron: '*/5 * * * *' });
    await rejects(service.resume(scope, id), 409, /^recurring action is already active$/);
    await rejects(service.pause(scope, 'missing'), 404);
  });

  it('updates partially: a new cron recomputes next_execution; null clears; 404 for an unknown id', async () => {
    const { service, scheduler, clock } = await setup(backend);
    const { id } = await service.create(input({ description: 'd', max_executions: 5 }), scope);
    clock.advance(60_000);
    const updated = await service.update(scope, id, {
      cron_expression: '0 12 * * *',
      timezone: 'Asia/Tokyo',
      description: null,
      payload: { to: 'b@example.com' },
    });
    expect(updated).toMatchObject({
      cron_expr: '0 12 * * *',
      timezone: 'Asia/Tokyo',
      next_execution: '2026-01-01T03:00:00.000Z',
      payload: { to: 'b@example.com' },
      max_executions: 5,
    });
    expect(updated).not.toHaveProperty('description');
    expect(scheduler.of(id)).toMatchObject({ cron: '0 12 * * *', timezone: 'Asia/Tokyo' });
    expect(await service.update(scope, id, { max_executions: null })).not.toHaveProperty('max_executions');
    await rejects(service.update(scope, id, { cron_expr: 'nope' }), 400);
    await rejects(service.update(scope, 'missing', { description: 'x' }), 404);
  });

  it('two updates of different timing fields racing from two replicas: neither is lost', async () => {
    const { state, clock, scheduler, service } = await setup(backend);
    const created = await service.create(input({ cron_expr: '0 3 * * *' }), scope);
    // Another replica's update lands between our read and our compare-and-swap.
    const { store, beforeNext } = racingStore(state);
    const racing = new RecurringService({ state: store, scheduler, clock, logger, events: new InternalEventBus(), maxPerTenant: 100, allowSecondsCron: false });
    beforeNext(() => service.update(scope, created.id, RecurringUpdateInput.parse({ timezone: 'Europe/Paris' })));
    await racing.update(scope, created.id, RecurringUpdateInput.parse({ cron_expr: '0 5 * * *' }));
    expect(await service.get(scope, created.id)).toMatchObject({ cron_expr: '0 5 * * *', timezone: 'Europe/Paris' });
  });

  it('declares again the schedule of an enabled action past due (its replica died before declaring it), not the others', async () => {
    const { service, scheduler, clock } = await setup(backend);
    const lost = await service.create(input({ cron_expr: '0 * * * *' }), scope);
    const paused = await service.create(input({ cron_expr: '0 * * * *' }), scope);
    await service.pause(scope, paused.id);
    const fine = await service.create(input({ cron_expr: '0 0 1 * *' }), scope);
    scheduler.schedules.clear(); // as if each write's replica had died before declaring it
    expect(await service.declareOverdue()).toBe(0); // nothing is past due yet
    clock.set(Date.parse(lost.next_execution as string) + 61_000);
    expect(await service.declareOverdue()).toBe(1);
    expect(scheduler.of(lost.id)).toMatchObject({ cron: '0 * * * *' });
    expect(scheduler.of(paused.id)).toBeUndefined();
    expect(scheduler.of(fine.id)).toBeUndefined();
    // Its missed occurrence is skipped: next_execution reads true again.
    expect(Date.parse((await service.get(scope, lost.id)).next_execution as string)).toBeGreaterThan(clock.now());
  });

  it('deletes: 404 afterwards, schedule removed, and a stray delivery cancels its schedule', async () => {
    const { service, scheduler } = await setup(backend);
    const { id } = await service.create(input(), scope);
    await service.delete(scope, id);
    expect(scheduler.of(id)).toBeUndefined();
    await rejects(service.get(scope, id), 404);
    await rejects(service.delete(scope, id), 404);
    await scheduler.repeat(RECURRING_FIRE_KIND, { id: scheduleId(id), cron: '* * * * *' });
    expect(await service.fire({ ...scope, id })).toBe('gone');
    expect(scheduler.of(id)).toBeUndefined();
  });

  it('lists a pair in creation order with the enabled/status filter and paging', async () => {
    const { service } = await setup(backend);
    const a = await service.create(input({ name: 'a' }), scope);
    const b = await service.create(input({ name: 'b' }), scope);
    await service.create(input({ name: 'other' }), { namespace: 'ns', tenant: 'u' });
    await service.pause(scope, b.id);
    const all = await service.list({ ...scope, limit: 100, offset: 0 });
    expect(all.count).toBe(2);
    expect(all.recurring_actions.map((r) => r.name)).toEqual(['a', 'b']);
    expect(all.recurring_actions[0]).not.toHaveProperty('payload');
    expect((await service.list({ ...scope, enabled: true, limit: 100, offset: 0 })).recurring_actions.map((r) => r.id)).toEqual([a.id]);
    expect((await service.list({ ...scope, status: 'paused', limit: 100, offset: 0 })).recurring_actions.map((r) => r.id)).toEqual([b.id]);
    expect(await service.list({ ...scope, limit: 1, offset: 1 })).toMatchObject({ count: 2, recurring_actions: [{ id: b.id }] });
  });

  it('fires through the gateway with the template, a per-occurrence id, the internal caller, and an event', async () => {
    const { service, gateway, events, clock } = await setup(backend);
    const { id } = await service.create(input({ metadata: { labels: { team: 'ops' } }, dedup_key: 'k' }), scope);
    clock.set(at('2026-01-01T00:05:00.010Z'));
    expect(await service.fire({ ...scope, id })).toBe('fired');
    expect(gateway.dispatched).toHaveLength(1);
    const [first] = gateway.dispatched;
    expect(first).toMatchObject({
      caller: `recurring:${id}`,
      action: {
        namespace: 'ns',
        tenant: 't',
        provider: 'email',
        action_type: 'send',
        payload: { to: 'a@example.com' },
        dedup_key: 'k',
        metadata: { labels: { team: 'ops' }, recurring_id: id, recurring_occurrence: '2026-01-01T00:05:00.000Z' },
      },
    });
    expect(events).toEqual([
      {
        type: 'recurring_fired',
        namespace: 'ns',
        tenant: 't',
        at: '2026-01-01T00:05:00.010Z',
        data: { recurring_id: id, occurrence: '2026-01-01T00:05:00.000Z', action_id: first?.action.id, outcome: 'executed', execution_count: 1 },
      },
    ]);
    expect(await service.get(scope, id)).toMatchObject({
      execution_count: 1,
      last_executed_at: '2026-01-01T00:05:00.010Z',
      next_execution: '2026-01-01T00:10:00.000Z',
    });
    expect(await service.fire({ ...scope, id })).toBe('not-due');
    expect(await service.fire({ bogus: true })).toBe('invalid');
  });

  it('max_executions: stops after the last one and drops the schedule; resume is refused until the limit is raised', async () => {
    const { service, scheduler, gateway, clock } = await setup(backend);
    const { id } = await service.create(input({ max_executions: 2 }), scope);
    for (const t of ['00:05', '00:10', '00:15']) {
      clock.set(at(`2026-01-01T${t}:00.000Z`));
      await service.fire({ ...scope, id });
    }
    expect(gateway.dispatched).toHaveLength(2);
    expect(await service.get(scope, id)).toMatchObject({ enabled: false, next_execution: null, execution_count: 2 });
    expect(scheduler.of(id)).toBeUndefined();
    await rejects(service.resume(scope, id), 409, /no executions left/);
    await service.update(scope, id, { max_executions: 3 });
    expect(await service.resume(scope, id)).toMatchObject({ enabled: true, next_execution: '2026-01-01T00:20:00.000Z' });
  });

  it('end_date: no execution after it', async () => {
    const { service, gateway, clock } = await setup(backend);
    const { id } = await service.create(input({ end_date: '2026-01-01T00:12:00Z' }), scope);
    for (const t of ['00:05', '00:10', '00:15', '00:20']) {
      clock.set(at(`2026-01-01T${t}:00.000Z`));
      await service.fire({ ...scope, id });
    }
    expect(gateway.dispatched.map((d) => d.action.metadata?.recurring_occurrence)).toEqual(['2026-01-01T00:05:00.000Z', '2026-01-01T00:10:00.000Z']);
    expect(await service.get(scope, id)).toMatchObject({ enabled: false, next_execution: null, ends_at: '2026-01-01T00:12:00.000Z' });
  });

  it('after downtime: missed occurrences are skipped, and declareAll re-creates lost schedules', async () => {
    const { service, scheduler, gateway, clock } = await setup(backend);
    const { id } = await service.create(input(), scope);
    const paused = await service.create(input(), scope);
    await service.pause(scope, paused.id);
    scheduler.schedules.clear(); // a new, empty Redis for BullMQ
    clock.set(at('2026-01-01T03:07:00Z'));
    expect(await service.declareAll()).toBe(1);
    expect(scheduler.of(id)).toMatchObject({ cron: '*/5 * * * *' });
    expect(scheduler.of(paused.id)).toBeUndefined();
    expect((await service.get(scope, id)).next_execution).toBe('2026-01-01T03:10:00.000Z');
    clock.set(at('2026-01-01T03:10:00.050Z'));
    expect(await service.fire({ ...scope, id })).toBe('fired');
    expect(gateway.dispatched).toHaveLength(1); // none of the ~37 missed occurrences
  });
});

describe.each(['memory', 'redis'] as const)('RecurringService across processes (%s)', (backend) => {
  it('claims each occurrence once however many workers get a delivery of it', async () => {
    const { service, peer, gateway, clock } = await setup(backend);
    const { id } = await service.create(input(), scope);
    const workers = [service, peer(), peer(), peer()];
    for (const t of ['00:05', '00:10', '00:15']) {
      clock.set(at(`2026-01-01T${t}:00.200Z`));
      // Every worker gets the occurrence, twice (at-least-once delivery), all at the same time.
      const results = await Promise.all([...workers, ...workers].map((w) => w.fire({ ...scope, id })));
      expect(results.filter((r) => r === 'fired')).toHaveLength(1);
    }
    const occurrences = gateway.dispatched.map((d) => d.action.metadata?.recurring_occurrence);
    expect(occurrences).toEqual(['2026-01-01T00:05:00.000Z', '2026-01-01T00:10:00.000Z', '2026-01-01T00:15:00.000Z']);
    expect(new Set(gateway.dispatched.map((d) => d.action.id)).size).toBe(3);
    expect((await service.get(scope, id)).execution_count).toBe(3);
  });

  it('holds the per-tenant maximum under concurrent creates from several replicas', async () => {
    const { service, peer } = await setup(backend, { max: 5 });
    const replicas = [service, peer(), peer()];
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => (replicas[i % 3] ?? service).create(input(), scope)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as SluiceError] : []));
    expect(refused.every((e) => e.statusCode === 409)).toBe(true);
    expect(refused.some((e) => /maximum of 5 recurring actions/.test(e.message))).toBe(true);
    expect((await service.list({ ...scope, limit: 100, offset: 0 })).count).toBe(5);
    // Another pair has its own maximum; a delete frees a slot.
    await service.create(input(), { namespace: 'ns', tenant: 'u' });
    const [first] = (await service.list({ ...scope, limit: 1, offset: 0 })).recurring_actions;
    await service.delete(scope, first?.id ?? '');
    await service.create(input(), scope);
  });

  it('a pause racing an occurrence: either the occurrence fires first or not at all', async () => {
    const { service, peer, gateway, clock } = await setup(backend);
    const { id } = await service.create(input(), scope);
    clock.set(at('2026-01-01T00:05:00.000Z'));
    const [fired] = await Promise.all([peer().fire({ ...scope, id }), service.pause(scope, id)]);
    const record = await service.get(scope, id);
    expect(record.enabled).toBe(false);
    expect(gateway.dispatched).toHaveLength(fired === 'fired' ? 1 : 0);
    expect(record.execution_count).toBe(gateway.dispatched.length);
  });
});
