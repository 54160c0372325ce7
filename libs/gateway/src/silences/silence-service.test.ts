import { ManualClock, type SilenceCreateInput } from '@sluice/core';
import { createLogger } from '@sluice/telemetry';
import { afterAll, describe, expect, it } from 'vitest';
import { racingStore } from '../../../../test/support/racing-store.js';
import { STATE_BACKENDS, stateStores } from '../../../../test/support/state-backends.js';
import { SilenceService } from './silence-service.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const DAY = 86_400_000;
const input = (tenant: string, duration_seconds: number): SilenceCreateInput => ({
  namespace: 'ns',
  tenant,
  matchers: [{ name: 'env', op: 'equal', value: 'prod' }],
  comment: 'c',
  duration_seconds,
});

describe.each(STATE_BACKENDS)('silence service (%s)', (backend) => {
  const stores = stateStores();
  const services: SilenceService[] = [];
  afterAll(async () => {
    await Promise.all(services.map((s) => s.close()));
  });

  async function replicas(clock: ManualClock, n: number): Promise<SilenceService[]> {
    const states = await stores.open(backend, { clock, replicas: n });
    const started = await Promise.all(
      states.map(async (state) => {
        const service = new SilenceService({ state, clock, logger, syncIntervalMs: 60_000 });
        await service.start();
        return service;
      }),
    );
    services.push(...started);
    return started;
  }

  it('reaps silences that ended more than the retention ago, and only those', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [service] = await replicas(clock, 1);
    if (!service) throw new Error('no replica');
    const old = await service.create(input('t-old', 60), 'ops');
    const recent = await service.create(input('t-recent', (2 * DAY) / 1000), 'ops');
    const live = await service.create(input('t-live', (30 * DAY) / 1000), 'ops');
    clock.advance(8 * DAY);
    expect(await service.reap(7 * DAY)).toBe(1);
    await expect(service.get(old.id)).rejects.toThrow(/silence not found/);
    expect((await service.get(recent.id)).active).toBe(false);
    expect((await service.get(live.id)).active).toBe(true);
    expect(await service.reap(7 * DAY)).toBe(0);
  });

  it('finds by id a silence created on another replica a moment ago, before its broadcast arrives', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [a, b] = await replicas(clock, 2);
    if (!a || !b) throw new Error('no replicas');
    // Many at once: some are read on b before b's snapshot has them.
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => a.create(input(`t-fresh-${i}`, 600), 'ops')));
    const read = await Promise.all(created.map((c) => b.get(c.id)));
    expect(read.map((r) => r.id)).toEqual(created.map((c) => c.id));
    await expect(b.get('no-such-silence')).rejects.toThrow(/silence not found/);
  });

  it('keeps every extend when two replicas extend the same silence at once (compare-and-swap)', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [a, b, reader] = await replicas(clock, 3);
    if (!a || !b || !reader) throw new Error('no replicas');
    const created = await a.create(input('t-race', 600), 'ops');
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).extend(created.id, 1)));
    // Read back through a replica that reloads now, not a snapshot still catching up with the last broadcast.
    await reader.close();
    await reader.start();
    expect(Date.parse((await reader.get(created.id)).ends_at)).toBe(Date.parse(created.ends_at) + 10 * 60_000);
  });

  it('an extend or edit that loses its compare-and-swap to an expire on another replica is refused (409): the silence stays expired', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [stateA, stateB] = await stores.open(backend, { clock, replicas: 2 });
    if (!stateA || !stateB) throw new Error('no replicas');
    const racing = racingStore(stateA);
    const a = new SilenceService({ state: racing.store, clock, logger, syncIntervalMs: 60_000 });
    const b = new SilenceService({ state: stateB, clock, logger, syncIntervalMs: 60_000 });
    await Promise.all([a.start(), b.start()]);
    services.push(a, b);
    const edits = [(id: string) => a.extend(id, 10), (id: string) => a.update(id, { ends_at: new Date(clock.now() + 2 * 3_600_000).toISOString() })];
    for (const edit of edits) {
      const created = await b.create(input('t-lost-race', 3600), 'ops');
      // b's expire lands between a's read and a's compare-and-swap, a second later.
      racing.beforeNext(async () => {
        clock.advance(1000);
        await b.expire(created.id);
      });
      await expect(edit(created.id)).rejects.toThrow(/has expired/);
      expect((await b.get(created.id)).active).toBe(false);
    }
  });
});
