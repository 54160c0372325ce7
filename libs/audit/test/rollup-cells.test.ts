import { ManualClock } from '@sluice/core';
import { MemoryStateStore, type BulkWriteOp, type StateKey } from '@sluice/state';
import { afterEach, describe, expect, it } from 'vitest';
import { AnalyticsRollups } from '../src/analytics/analytics-rollups.js';
import { CellMemo } from '../src/analytics/cell-memo.js';
import { binOf } from '../src/analytics/histogram.js';
import { binKey, countKey, encodeMember, indexKey, sumKey, tenantIndexKey, tupleRef } from '../src/analytics/rollup-keys.js';
import { HOUR_MS, floorDay, floorHour } from '../src/analytics/time-buckets.js';
import { counterKey as coverageCounterKey, tupleRef as coverageTupleRef } from '../src/coverage/coverage-keys.js';
import { CoverageRollups } from '../src/coverage/coverage-rollups.js';

const NOW = Date.UTC(2026, 10, 27, 12, 30);
const tuple = { namespace: 'ns', tenant: 't1', provider: 'email', action_type: 'send', outcome: 'executed' };
const record = (atMs: number, duration_ms = 3) => ({ ...tuple, dispatched_at: new Date(atMs).toISOString(), duration_ms });
const keyOf = (w: BulkWriteOp): StateKey => (w.op === 'increment' ? w.key : w.op === 'indexAdd' ? w.index : (undefined as never));

const stores: MemoryStateStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
function state(): MemoryStateStore {
  const s = new MemoryStateStore({ clock: new ManualClock(NOW) });
  stores.push(s);
  return s;
}

describe('rollup cells', () => {
  it('CellMemo keeps cells by hash and bucket, and starts over at its limit', () => {
    const memo = new CellMemo<string>(3);
    memo.set('h1', 1, 'a');
    memo.set('h1', 2, 'b');
    memo.set('h2', 1, 'c');
    expect([memo.get('h1', 1), memo.get('h1', 2), memo.get('h2', 1), memo.get('h2', 2)]).toEqual(['a', 'b', 'c', undefined]);
    memo.set('h3', 1, 'd'); // the fourth: the three before are dropped
    expect([memo.get('h1', 1), memo.get('h3', 1)]).toEqual([undefined, 'd']);
  });

  it('analytics: records of one tuple, hour and bin write through the same frozen keys, equal to the ones the layout names', () => {
    const rollups = new AnalyticsRollups({ state: state(), clock: new ManualClock(NOW) });
    const first = rollups.writesFor(record(NOW));
    const second = rollups.writesFor(record(NOW + 60_000));
    expect(first).toHaveLength(10);
    first.forEach((w, i) => {
      expect(keyOf(second[i] as BulkWriteOp)).toBe(keyOf(w));
      expect(Object.isFrozen(keyOf(w))).toBe(true);
    });
    const ref = tupleRef(tuple);
    const bin = binOf(3);
    const [hour, day] = [floorHour(NOW), floorDay(NOW)];
    expect(first.map(keyOf)).toEqual([
      binKey('hour', hour, ref, bin),
      sumKey('hour', hour, ref),
      countKey('hour', hour, ref),
      indexKey('hour', hour),
      tenantIndexKey('hour', hour, 't1'),
      binKey('day', day, ref, bin),
      sumKey('day', day, ref),
      countKey('day', day, ref),
      indexKey('day', day),
      tenantIndexKey('day', day, 't1'),
    ]);
    expect(first[3]).toMatchObject({ member: encodeMember(tuple, bin) });
  });

  it('analytics: another hour, bin or tuple writes other keys', () => {
    const rollups = new AnalyticsRollups({ state: state(), clock: new ManualClock(NOW) });
    const base = rollups.writesFor(record(NOW)).map(keyOf);
    const nextHour = rollups.writesFor(record(NOW + HOUR_MS)).map(keyOf);
    expect(nextHour[0]).toEqual(binKey('hour', floorHour(NOW) + HOUR_MS, tupleRef(tuple), binOf(3)));
    expect(nextHour[5]).toBe(base[5]); // the same day
    const slower = rollups.writesFor(record(NOW, 900)).map(keyOf);
    expect(slower[0]).toEqual(binKey('hour', floorHour(NOW), tupleRef(tuple), binOf(900)));
    expect(slower[1]).toEqual(base[1]); // the tuple's sum, from another cell
    const other = rollups.writesFor({ ...record(NOW), tenant: 't2' }).map(keyOf);
    expect(other[1]).toEqual(sumKey('hour', floorHour(NOW), tupleRef({ ...tuple, tenant: 't2' })));
  });

  it('coverage: records of one tuple and day share frozen keys; another rule or day gets its own', () => {
    const coverage = new CoverageRollups({ state: state(), clock: new ManualClock(NOW) });
    const of = (matched_rule: string | null, atMs = NOW) => coverage.writesFor({ ...record(atMs), matched_rule }).map(keyOf);
    const [a, b] = [of('r1'), of('r1', NOW + 1000)];
    a.forEach((key, i) => {
      expect(b[i]).toBe(key);
      expect(Object.isFrozen(key)).toBe(true);
    });
    const cov = { namespace: 'ns', tenant: 't1', provider: 'email', action_type: 'send' };
    expect(a[0]).toEqual(coverageCounterKey(floorDay(NOW), coverageTupleRef({ ...cov, matched_rule: 'r1' })));
    expect(of(null)[0]).toEqual(coverageCounterKey(floorDay(NOW), coverageTupleRef({ ...cov, matched_rule: null })));
    expect(of('r1', NOW + 86_400_000)[0]).toEqual(coverageCounterKey(floorDay(NOW) + 86_400_000, coverageTupleRef({ ...cov, matched_rule: 'r1' })));
  });
});
