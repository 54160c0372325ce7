import { ManualClock } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { AnalyticsRollups, type RollupQuery } from '../src/analytics/index.js';
import { analyticsContract } from './analytics.contract.js';
import { ANCHOR, END, bruteForce, generateRecords } from './analytics.dataset.js';
import { spied } from './support/spied-store.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

analyticsContract('memory', async () => {
  const store = new MemoryStateStore({ clock: new ManualClock(END) });
  return { rollups: new AnalyticsRollups({ state: store, clock: new ManualClock(END) }), cleanup: () => store.close() };
});

describe('AnalyticsRollups on memory: costs, retention', () => {
  it('writes each record as one batch of 10 TTL-bound writes: bin, sum and count, then the global and tenant index', async () => {
    const clock = new ManualClock(END);
    const spy = spied(new MemoryStateStore({ clock }));
    const rollups = new AnalyticsRollups({ state: spy.store, clock });
    await rollups.record({
      namespace: 'n',
      tenant: 't',
      provider: 'p',
      action_type: 'a',
      outcome: 'executed',
      dispatched_at: new Date(END - HOUR).toISOString(),
      duration_ms: 12.5,
    });
    expect(spy.batches).toHaveLength(1);
    const bucket = ['increment', 'increment', 'increment', 'indexAdd', 'indexAdd'];
    expect(spy.batches[0]?.map((op) => op.op)).toEqual([...bucket, ...bucket]);
    // Hourly rollups live 35 days by default, daily ones 400.
    const ttls = spy.batches[0]?.map((op) => Math.round((op.ttlMs ?? 0) / DAY));
    expect(ttls).toEqual([35, 35, 35, 35, 35, 400, 400, 400, 400, 400]);
  });

  it('reads per bucket and distinct (tuple, bin), not per record', async () => {
    const clock = new ManualClock(END);
    const cost = async (records: number) => {
      const spy = spied(new MemoryStateStore({ clock }));
      const rollups = new AnalyticsRollups({ state: spy.store, clock });
      // One tuple and one duration: every record lands in the same cells.
      for (let i = 0; i < records; i++) {
        await rollups.record({
          namespace: 'n',
          tenant: 't',
          provider: 'p',
          action_type: 'a',
          outcome: 'executed',
          dispatched_at: new Date(ANCHOR + (i % 7) * DAY).toISOString(),
          duration_ms: 5,
        });
      }
      const before = { index: spy.indexReads(), keys: spy.keysRead() };
      const result = await rollups.query({ metric: 'latency', interval: 'daily', fromMs: ANCHOR, toMs: ANCHOR + 7 * DAY });
      expect(result.total_count).toBe(records);
      return { index: spy.indexReads() - before.index, keys: spy.keysRead() - before.keys };
    };
    const small = await cost(70);
    expect(await cost(7000)).toEqual(small);
    expect(small).toEqual({ index: 7, keys: 14 }); // 7 daily buckets: 1 bin counter + 1 sum each
  });

  it('reads one count per (bucket, tuple) for counting metrics, and the bins only for latency', async () => {
    const clock = new ManualClock(END);
    const spy = spied(new MemoryStateStore({ clock }));
    const rollups = new AnalyticsRollups({ state: spy.store, clock });
    // One tuple whose durations spread over 5 bins, on each of 7 days.
    for (let i = 0; i < 70; i++) {
      const durationMs = [1, 10, 100, 1000, 10_000][i % 5] ?? 1;
      await rollups.record({
        namespace: 'n',
        tenant: 't',
        provider: 'p',
        action_type: 'a',
        outcome: 'failed',
        dispatched_at: new Date(ANCHOR + (i % 7) * DAY).toISOString(),
        duration_ms: durationMs,
      });
    }
    const keysFor = async (metric: 'volume' | 'error_rate' | 'top_action_types' | 'outcome_breakdown' | 'latency') => {
      const before = spy.keysRead();
      const result = await rollups.query({ metric, interval: 'daily', fromMs: ANCHOR, toMs: ANCHOR + 7 * DAY });
      expect(result.total_count).toBe(70);
      return spy.keysRead() - before;
    };
    for (const metric of ['volume', 'error_rate', 'top_action_types', 'outcome_breakdown'] as const) expect(await keysFor(metric), metric).toBe(7);
    expect(await keysFor('latency')).toBe(7 * (5 + 1)); // 5 bins and a sum per day
  });

  it('lists the tenant indexes when a tenant is named, with or without a namespace, and the global ones otherwise', async () => {
    const clock = new ManualClock(END);
    const spy = spied(new MemoryStateStore({ clock }));
    const rollups = new AnalyticsRollups({ state: spy.store, clock });
    const records = generateRecords(300, 5);
    for (const r of records) await rollups.record(r);
    const kindsOf = async (filter: Partial<RollupQuery>) => {
      spy.indexKinds.clear();
      const q: RollupQuery = { metric: 'volume', interval: 'daily', fromMs: ANCHOR, toMs: END, groupBy: 'namespace', ...filter };
      expect(await rollups.query(q)).toEqual(bruteForce(records, q));
      return [...spy.indexKinds];
    };
    expect(await kindsOf({ namespace: 'prod', tenant: 'acme' })).toEqual(['analytics-tix']);
    expect(await kindsOf({ tenant: 'acme' })).toEqual(['analytics-tix']);
    expect(await kindsOf({ namespace: 'prod' })).toEqual(['analytics-ix']);
    expect(await kindsOf({})).toEqual(['analytics-ix']);
  });

  it('expires rollups `retentionDays` after their bucket ends, and skips records already past it', async () => {
    const clock = new ManualClock(END);
    const store = new MemoryStateStore({ clock });
    const rollups = new AnalyticsRollups({ state: store, clock, retentionDays: 3 });
    const records = generateRecords(500, 7);
    for (const r of records) await rollups.record(r);
    const q = { metric: 'volume', interval: 'daily', fromMs: ANCHOR, toMs: END } as const;
    // A day is kept until 3 days after its end: days ending 3 days or more before END were never written.
    const recent = records.filter((r) => Date.parse(r.dispatched_at) >= END - 3 * DAY);
    expect(await rollups.query(q)).toEqual(bruteForce(recent, q));
    clock.advance(2 * DAY);
    const last = records.filter((r) => Date.parse(r.dispatched_at) >= END - DAY);
    expect(await rollups.query(q)).toEqual(bruteForce(last, q));
    clock.advance(DAY);
    expect((await rollups.query(q)).total_count).toBe(0);
    await store.close();
  });

  it('reads a whole day when the hours of a partly covered day have expired', async () => {
    const clock = new ManualClock(END);
    const store = new MemoryStateStore({ clock });
    const rollups = new AnalyticsRollups({ state: store, clock, retentionDays: 30, hourlyRetentionDays: 1 });
    const records = generateRecords(500, 9);
    for (const r of records) await rollups.record(r);
    const partial = { metric: 'volume', interval: 'daily', fromMs: ANCHOR + 2 * DAY + 12 * HOUR, toMs: ANCHOR + 3 * DAY } as const;
    const wholeDay = { ...partial, fromMs: ANCHOR + 2 * DAY };
    expect((await rollups.query(partial)).buckets).toEqual(bruteForce(records, wholeDay).buckets);
    await store.close();
  });

  it('answers an hourly query with the hours still kept: older hours have no buckets, daily queries still count them', async () => {
    const clock = new ManualClock(END);
    const store = new MemoryStateStore({ clock });
    const rollups = new AnalyticsRollups({ state: store, clock, retentionDays: 30, hourlyRetentionDays: 2 });
    const records = generateRecords(500, 13);
    for (const r of records) await rollups.record(r);
    const hourly = { metric: 'volume', interval: 'hourly', fromMs: ANCHOR, toMs: END } as const;
    // An hour is kept until 2 days after it ends: the hours ending 2 days or more before END are gone.
    const kept = records.filter((r) => Date.parse(r.dispatched_at) >= END - 2 * DAY);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(records.length);
    expect(await rollups.query(hourly)).toEqual(bruteForce(kept, hourly));
    const daily = { ...hourly, interval: 'daily' } as const;
    expect(await rollups.query(daily)).toEqual(bruteForce(records, daily));
    await store.close();
  });

  it('caps the hourly retention at the daily one', async () => {
    const clock = new ManualClock(END);
    const spy = spied(new MemoryStateStore({ clock }));
    const rollups = new AnalyticsRollups({ state: spy.store, clock, retentionDays: 10, hourlyRetentionDays: 35 });
    await rollups.record({
      namespace: 'n',
      tenant: 't',
      provider: 'p',
      action_type: 'a',
      outcome: 'executed',
      dispatched_at: new Date(END - HOUR).toISOString(),
      duration_ms: 1,
    });
    expect(new Set(spy.batches[0]?.map((op) => Math.round((op.ttlMs ?? 0) / DAY)))).toEqual(new Set([10]));
  });
});
