import type { AnalyticsDimension, AnalyticsInterval, AnalyticsMetric } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyticsRollups, RollupQuery, RollupRecord } from '../src/analytics/index.js';
import { ANCHOR, END, bruteForce, generateRecords } from './analytics.dataset.js';

/** A rollup store on one backend whose clock reads END (so the data set is within retention). */
export interface RollupsFixture {
  rollups: AnalyticsRollups;
  /** Writes the records where the rollups' source counts them (default: each through the rollups' own record(), into the state store). */
  recordAll?: (records: RollupRecord[]) => Promise<void>;
  cleanup: () => Promise<void>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RECORDS = 10_000;
/** Records written concurrently (each is one writeBatch: one pipeline on Redis). */
const IN_FLIGHT = 500;

const INTERVALS: AnalyticsInterval[] = ['hourly', 'daily', 'weekly', 'monthly'];
const METRICS: AnalyticsMetric[] = ['volume', 'outcome_breakdown', 'top_action_types', 'latency', 'error_rate'];
const GROUPS: (AnalyticsDimension | undefined)[] = [undefined, 'provider', 'action_type', 'outcome', 'namespace', 'tenant'];

const RANGES: { name: string; fromMs: number; toMs: number }[] = [
  { name: 'whole data set', fromMs: ANCHOR, toMs: END },
  { name: 'unaligned, partial first and last days', fromMs: ANCHOR + DAY + 5 * HOUR + 17 * 60_000, toMs: ANCHOR + 7 * DAY + 13 * HOUR + 1000 },
  { name: 'a few hours across midnight', fromMs: ANCHOR + 3 * DAY + 22 * HOUR + 30 * 60_000, toMs: ANCHOR + 4 * DAY + HOUR },
  { name: 'last 7 days', fromMs: END - 7 * DAY, toMs: END },
];

/** Hierarchical grant on acme (acme, acme.eu, acme.us) outside the dev namespace. */
const acmeOutsideDev = (namespace: string, tenant: string) => namespace !== 'dev' && (tenant === 'acme' || tenant.startsWith('acme.'));

const FILTERS: { name: string; filter: Partial<RollupQuery> }[] = [
  { name: 'no filter', filter: {} },
  { name: 'tenant', filter: { tenant: 'acme' } },
  { name: 'namespace + provider', filter: { namespace: 'prod', provider: 'email' } },
  { name: 'outcome', filter: { outcome: 'failed' } },
  { name: 'action type + tenant', filter: { action_type: 'send', tenant: 'globex' } },
  { name: 'visible (grants)', filter: { visible: acmeOutsideDev } },
];

async function recordEach(rollups: AnalyticsRollups, records: RollupRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += IN_FLIGHT) {
    await Promise.all(records.slice(i, i + IN_FLIGHT).map((r) => rollups.record(r)));
  }
}

export function analyticsContract(backend: string, makeFixture: () => Promise<RollupsFixture>): void {
  describe(`AnalyticsRollups on ${backend}: ${RECORDS} records against a brute force`, () => {
    const records = generateRecords(RECORDS);
    let fx: RollupsFixture;

    beforeAll(async () => {
      fx = await makeFixture();
      await (fx.recordAll ?? ((all) => recordEach(fx.rollups, all)))(records);
    }, 120_000);
    afterAll(async () => fx.cleanup());

    const check = async (q: RollupQuery, label: string) => {
      expect(await fx.rollups.query(q), label).toEqual(bruteForce(records, q));
    };

    it('counts every record once over the whole range', async () => {
      const result = await fx.rollups.query({ metric: 'volume', interval: 'daily', fromMs: ANCHOR, toMs: END });
      expect(result.total_count).toBe(RECORDS);
      expect(result.buckets).toHaveLength(10);
    });

    for (const interval of INTERVALS) {
      for (const [m, metric] of METRICS.entries()) {
        it(`${metric} ${interval}: every group_by, rotating ranges and filters`, async () => {
          for (const [g, groupBy] of GROUPS.entries()) {
            const i = m * GROUPS.length + g;
            const range = RANGES[i % RANGES.length]!;
            const { name, filter } = FILTERS[Math.floor(i / RANGES.length) % FILTERS.length]!;
            const q: RollupQuery = { metric, interval, fromMs: range.fromMs, toMs: range.toMs, ...filter, groupBy };
            await check(q, `${metric} ${interval} group_by=${groupBy ?? '-'} range=${range.name} filter=${name}`);
          }
        });
      }
    }

    it('every filter on every range (daily latency, no group)', async () => {
      for (const range of RANGES) {
        for (const { name, filter } of FILTERS) {
          await check({ metric: 'latency', interval: 'daily', fromMs: range.fromMs, toMs: range.toMs, ...filter }, `${range.name} ${name}`);
        }
      }
    });

    it('namespace + tenant, and tenant alone, on every metric (read from the tenant indexes)', async () => {
      const scoped: Partial<RollupQuery>[] = [
        { namespace: 'staging', tenant: 'acme' },
        { tenant: 'acme.eu' },
        { namespace: 'prod', tenant: 'globex', outcome: 'failed' },
      ];
      for (const [i, metric] of METRICS.entries()) {
        for (const filter of scoped) {
          const range = RANGES[i % RANGES.length]!;
          const q: RollupQuery = { metric, interval: INTERVALS[i % INTERVALS.length]!, fromMs: range.fromMs, toMs: range.toMs, ...filter };
          await check(q, `${metric} ${JSON.stringify(filter)} range=${range.name}`);
        }
      }
    });

    it('top_n bounds top_entries; percentages are of the total', async () => {
      for (const topN of [1, 3, 100]) {
        await check({ metric: 'top_action_types', interval: 'weekly', fromMs: ANCHOR, toMs: END, topN }, `top_n=${topN}`);
      }
      const three = await fx.rollups.query({ metric: 'top_action_types', interval: 'daily', fromMs: ANCHOR, toMs: END, topN: 3 });
      expect(three.top_entries?.map((e) => e.label)).toEqual(['send', 'notify', 'alert']);
    });

    it('an empty selection has no buckets, empty top_entries and total 0', async () => {
      const q: RollupQuery = { metric: 'top_action_types', interval: 'daily', fromMs: ANCHOR, toMs: END, tenant: 'nobody' };
      const result = await fx.rollups.query(q);
      expect(result).toEqual({
        metric: 'top_action_types',
        interval: 'daily',
        from: new Date(ANCHOR).toISOString(),
        to: new Date(END).toISOString(),
        buckets: [],
        top_entries: [],
        total_count: 0,
      });
      expect(result).toEqual(bruteForce(records, q));
    });

    it('refuses from after to, and ranges needing more than 10 000 buckets', async () => {
      await expect(fx.rollups.query({ metric: 'volume', interval: 'daily', fromMs: END, toMs: ANCHOR })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(fx.rollups.query({ metric: 'volume', interval: 'hourly', fromMs: END - 500 * DAY, toMs: END })).rejects.toMatchObject({
        code: 'BAD_REQUEST',
      });
      // 10 000 hours exactly is allowed.
      await fx.rollups.query({ metric: 'volume', interval: 'hourly', fromMs: END - 10_000 * HOUR, toMs: END });
    });
  });
}
