import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoverageRecord, CoverageRollupQuery, CoverageRollups } from '../src/coverage/index.js';
import { ANCHOR, END, bruteForce, generateRecords } from './coverage.dataset.js';

/** A coverage rollup store on one backend whose clock reads END (so the data set is within retention). */
export interface CoverageFixture {
  rollups: CoverageRollups;
  /** Writes the records where the rollups' source counts them (default: each through the rollups' own record(), into the state store). */
  recordAll?: (records: CoverageRecord[]) => Promise<void>;
  cleanup: () => Promise<void>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RECORDS = 5000;
/** Records written concurrently (each is one writeBatch: one pipeline on Redis). */
const IN_FLIGHT = 500;

const RANGES: { name: string; fromMs: number; toMs: number }[] = [
  { name: 'whole data set', fromMs: ANCHOR, toMs: END },
  { name: 'unaligned: partial first and last days count whole', fromMs: ANCHOR + DAY + 5 * HOUR + 17_000, toMs: ANCHOR + 6 * DAY + 13 * HOUR },
  { name: 'one instant inside a day', fromMs: ANCHOR + 3 * DAY + HOUR, toMs: ANCHOR + 3 * DAY + HOUR },
  { name: 'midnight to midnight (end exclusive)', fromMs: ANCHOR + 2 * DAY, toMs: ANCHOR + 4 * DAY },
  { name: 'last 7 days', fromMs: END - 7 * DAY, toMs: END },
  { name: 'before the data', fromMs: ANCHOR - 30 * DAY, toMs: ANCHOR - DAY },
];

/** Hierarchical grant on acme (acme, acme.eu) outside the dev namespace. */
const acmeOutsideDev = (namespace: string, tenant: string) => namespace !== 'dev' && (tenant === 'acme' || tenant.startsWith('acme.'));

const FILTERS: { name: string; filter: Partial<CoverageRollupQuery> }[] = [
  { name: 'no filter', filter: {} },
  { name: 'tenant', filter: { tenant: 'acme' } },
  { name: 'escaped tenant', filter: { tenant: 'ini:tech{x}' } },
  { name: 'namespace', filter: { namespace: 'prod' } },
  { name: 'namespace + tenant', filter: { namespace: 'staging', tenant: 'globex' } },
  { name: 'visible (grants)', filter: { visible: acmeOutsideDev } },
  { name: 'nobody', filter: { tenant: 'nobody' } },
];

async function recordEach(rollups: CoverageRollups, records: CoverageRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += IN_FLIGHT) {
    await Promise.all(records.slice(i, i + IN_FLIGHT).map((r) => rollups.record(r)));
  }
}

export function coverageContract(backend: string, makeFixture: () => Promise<CoverageFixture>): void {
  describe(`CoverageRollups on ${backend}: ${RECORDS} records against a brute force`, () => {
    const records = generateRecords(RECORDS);
    let fx: CoverageFixture;

    beforeAll(async () => {
      fx = await makeFixture();
      await (fx.recordAll ?? ((all) => recordEach(fx.rollups, all)))(records);
    }, 120_000);
    afterAll(async () => fx.cleanup());

    it('counts every record once over the whole range, in all three coverage groups', async () => {
      const result = await fx.rollups.query({ fromMs: ANCHOR, toMs: END });
      expect(result.entries.reduce((s, e) => s + e.total, 0)).toBe(RECORDS);
      for (const e of result.entries) expect(e.covered + e.uncovered).toBe(e.total);
      const groups = new Set(result.entries.map((e) => (e.covered === 0 ? 'uncovered' : e.uncovered === 0 ? 'covered' : 'partial')));
      expect([...groups]).toEqual(['uncovered', 'partial', 'covered']);
      // A rule named "null" is a rule, not the absence of one.
      expect(result.entries.some((e) => e.matched_rules.includes('null'))).toBe(true);
    });

    it('matches the brute force on every range and filter', async () => {
      for (const range of RANGES) {
        for (const { name, filter } of FILTERS) {
          const q: CoverageRollupQuery = { fromMs: range.fromMs, toMs: range.toMs, ...filter };
          expect(await fx.rollups.query(q), `${range.name} / ${name}`).toEqual(bruteForce(records, q));
        }
      }
    });

    it('refuses from after to and ranges over 400 days', async () => {
      await expect(fx.rollups.query({ fromMs: END, toMs: ANCHOR })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(fx.rollups.query({ fromMs: END - 400 * DAY - 1, toMs: END })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(fx.rollups.query({ fromMs: Number.NaN, toMs: END })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      const longest = await fx.rollups.query({ fromMs: END - 400 * DAY, toMs: END });
      expect(longest).toEqual(bruteForce(records, { fromMs: END - 400 * DAY, toMs: END }));
    });
  });
}
