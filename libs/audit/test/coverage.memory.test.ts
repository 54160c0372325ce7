import { ManualClock } from '@sluice/core';
import { MemoryStateStore, type StateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { indexKey } from '../src/coverage/coverage-keys.js';
import { CoverageRollups, type CoverageRecord } from '../src/coverage/index.js';
import { coverageContract } from './coverage.contract.js';
import { ANCHOR, END, bruteForce, generateRecords } from './coverage.dataset.js';
import { spied } from './support/spied-store.js';

const DAY = 24 * 3_600_000;

coverageContract('memory', async () => {
  const store = new MemoryStateStore({ clock: new ManualClock(END) });
  return { rollups: new CoverageRollups({ state: store, clock: new ManualClock(END) }), cleanup: () => store.close() };
});

const record = (over: Partial<CoverageRecord> & { at: number }): CoverageRecord => {
  const { at, ...fields } = over;
  return { namespace: 'n', tenant: 't', provider: 'p', action_type: 'a', matched_rule: null, dispatched_at: new Date(at).toISOString(), ...fields };
};

describe('CoverageRollups on memory: costs, retention, damaged data', () => {
  it('writes each record as one batch of 3 TTL-bound writes: the counter, then the global and tenant index', async () => {
    const clock = new ManualClock(END);
    const spy = spied(new MemoryStateStore({ clock }));
    const rollups = new CoverageRollups({ state: spy.store, clock });
    await rollups.record(record({ at: END - DAY, matched_rule: 'r' }));
    expect(spy.batches).toHaveLength(1);
    expect(spy.batches[0]?.map((op) => op.op)).toEqual(['increment', 'indexAdd', 'indexAdd']);
    // The day ends at END, so every key lives 400 days from now.
    expect(spy.batches[0]?.map((op) => op.ttlMs)).toEqual([400 * DAY, 400 * DAY, 400 * DAY]);
  });

  it('reads per day and distinct tuple, not per record', async () => {
    const clock = new ManualClock(END);
    const cost = async (records: number) => {
      const spy = spied(new MemoryStateStore({ clock }));
      const rollups = new CoverageRollups({ state: spy.store, clock });
      // Two tuples (matched and not) on each of 7 days, whatever the number of records.
      for (let i = 0; i < records; i++) await rollups.record(record({ at: ANCHOR + (i % 7) * DAY, matched_rule: i % 2 ? 'r' : null }));
      const before = { index: spy.indexReads(), keys: spy.keysRead() };
      const result = await rollups.query({ fromMs: ANCHOR, toMs: ANCHOR + 7 * DAY });
      expect(result.entries.map((e) => e.total)).toEqual([records]);
      return { index: spy.indexReads() - before.index, keys: spy.keysRead() - before.keys };
    };
    const small = await cost(70);
    expect(await cost(7000)).toEqual(small);
    expect(small).toEqual({ index: 7, keys: 14 });
  });

  it('lists the tenant indexes when a tenant is named, with or without a namespace, and the global ones otherwise', async () => {
    const clock = new ManualClock(END);
    const store = new MemoryStateStore({ clock });
    const kinds = new Set<string>();
    const spy = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'indexRange') {
          return async (...args: Parameters<StateStore['indexRange']>) => {
            kinds.add(args[0].kind);
            return target.indexRange(...args);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const rollups = new CoverageRollups({ state: spy, clock });
    const records = generateRecords(300, 5);
    for (const r of records) await rollups.record(r);
    const kindsOf = async (filter: { namespace?: string; tenant?: string }) => {
      kinds.clear();
      const q = { fromMs: ANCHOR, toMs: END, ...filter };
      expect(await rollups.query(q)).toEqual(bruteForce(records, q));
      return [...kinds];
    };
    expect(await kindsOf({ namespace: 'prod', tenant: 'acme' })).toEqual(['coverage-tix']);
    expect(await kindsOf({ tenant: 'acme' })).toEqual(['coverage-tix']);
    expect(await kindsOf({ namespace: 'prod' })).toEqual(['coverage-ix']);
    expect(await kindsOf({})).toEqual(['coverage-ix']);
    await store.close();
  });

  it('expires a day `retentionDays` after it ends, and skips records already past it', async () => {
    const clock = new ManualClock(END);
    const store = new MemoryStateStore({ clock });
    const rollups = new CoverageRollups({ state: store, clock, retentionDays: 3 });
    const records = generateRecords(500, 11);
    for (const r of records) await rollups.record(r);
    const q = { fromMs: ANCHOR, toMs: END };
    // A day is kept until 3 days after its end: days ending 3 days or more before END were never written.
    const recent = records.filter((r) => Date.parse(r.dispatched_at) >= END - 3 * DAY);
    expect(await rollups.query(q)).toEqual(bruteForce(recent, q));
    clock.advance(2 * DAY);
    expect(await rollups.query(q)).toEqual(
      bruteForce(
        records.filter((r) => Date.parse(r.dispatched_at) >= END - DAY),
        q,
      ),
    );
    clock.advance(DAY);
    expect((await rollups.query(q)).entries).toEqual([]);
    await store.close();
  });

  it('skips index members it cannot read and entries whose counter is missing', async () => {
    const clock = new ManualClock(END);
    const store = new MemoryStateStore({ clock });
    const rollups = new CoverageRollups({ state: store, clock });
    await rollups.record(record({ at: ANCHOR, matched_rule: 'r' }));
    await store.indexAdd(indexKey(ANCHOR), 'not json', ANCHOR);
    await store.indexAdd(indexKey(ANCHOR), JSON.stringify(['n', 't', 'p', 'a', 7]), ANCHOR);
    // As left by a crash between the counter and the index write of another tuple.
    await store.indexAdd(indexKey(ANCHOR), JSON.stringify(['n', 't', 'p', 'b', null]), ANCHOR);
    const result = await rollups.query({ fromMs: ANCHOR, toMs: ANCHOR + DAY });
    expect(result.entries).toEqual([
      { namespace: 'n', tenant: 't', provider: 'p', action_type: 'a', total: 1, covered: 1, uncovered: 0, matched_rules: ['r'] },
    ]);
    await store.close();
  });

  it('refuses a record with an unreadable dispatched_at', async () => {
    const clock = new ManualClock(END);
    const rollups = new CoverageRollups({ state: new MemoryStateStore({ clock }), clock });
    await expect(rollups.record({ ...record({ at: END }), dispatched_at: 'yesterday' })).rejects.toThrow(TypeError);
  });
});
