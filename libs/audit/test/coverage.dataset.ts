import type { CoverageEntry } from '@sluice/core';
import type { CoverageRecord, CoverageRollupQuery, CoverageRollupResult } from '../src/coverage/index.js';
import { prng } from '../../../test/support/prng.js';

/*
 * A deterministic data set and a brute-force coverage over it, record by record. It shares no
 * code with the rollups: day rounding, grouping and ordering are written out again here.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Tuesday 2026-02-24: ten days across a month end. */
export const ANCHOR = Date.UTC(2026, 1, 24);
const DAYS = 10;
export const END = ANCHOR + DAYS * DAY;

const NAMESPACES = ['prod', 'staging', 'dev'] as const;
const TENANTS = ['acme', 'acme.eu', 'globex', 'ini:tech{x}'] as const;
const PROVIDERS = ['email', 'sms', 'webhook'] as const;
/** Rule names include one spelled "null", which must stay apart from "no rule". */
const RULES = ['block-spam', 'allow-vip', 'dedup-receipts', 'null', 'throttle:burst'] as const;

/**
 * Action types with fixed coverage, so all three entry groups occur: `spam` is always matched,
 * `digest` never, the others sometimes (by one or more rules).
 */
function ruleFor(actionType: string, rand: () => number, pick: <T>(xs: readonly T[]) => T): string | null {
  if (actionType === 'spam') return 'block-spam';
  if (actionType === 'digest') return null;
  return rand() < 0.45 ? null : pick(RULES.slice(1));
}

export function generateRecords(count: number, seed = 7): CoverageRecord[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const records: CoverageRecord[] = [];
  for (let i = 0; i < count; i++) {
    let at = ANCHOR + Math.floor(rand() * DAYS * DAY);
    if (rand() < 0.02) at -= at % DAY; // exactly at midnight
    const action_type = pick(['send', 'notify', 'spam', 'digest', 'page']);
    records.push({
      namespace: pick(NAMESPACES),
      tenant: pick(TENANTS),
      provider: pick(PROVIDERS),
      action_type,
      matched_rule: ruleFor(action_type, rand, pick),
      dispatched_at: new Date(at).toISOString(),
    });
  }
  return records;
}

function midnight(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

function byCode(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The answer computed from every record: days [midnight(from), next midnight at or after to). */
export function bruteForce(records: readonly CoverageRecord[], q: CoverageRollupQuery): CoverageRollupResult {
  const start = midnight(q.fromMs);
  const end = midnight(q.toMs) === q.toMs ? q.toMs : midnight(q.toMs) + DAY;
  const groups = new Map<string, { entry: CoverageEntry; rules: Set<string> }>();
  for (const r of records) {
    const at = Date.parse(r.dispatched_at);
    if (at < start || at >= end) continue;
    if (q.namespace !== undefined && r.namespace !== q.namespace) continue;
    if (q.tenant !== undefined && r.tenant !== q.tenant) continue;
    if (q.visible && !q.visible(r.namespace, r.tenant)) continue;
    const id = [r.namespace, r.tenant, r.provider, r.action_type].join('\u0000');
    const group = groups.get(id) ?? {
      entry: {
        namespace: r.namespace,
        tenant: r.tenant,
        provider: r.provider,
        action_type: r.action_type,
        total: 0,
        covered: 0,
        uncovered: 0,
        matched_rules: [],
      },
      rules: new Set<string>(),
    };
    groups.set(id, group);
    group.entry.total++;
    if (r.matched_rule === null) group.entry.uncovered++;
    else {
      group.entry.covered++;
      group.rules.add(r.matched_rule);
    }
  }
  const rank = (e: CoverageEntry) => (e.covered === 0 ? 0 : e.covered < e.total ? 1 : 2);
  const entries = [...groups.values()]
    .map(({ entry, rules }) => ({ ...entry, matched_rules: [...rules].sort(byCode) }))
    .sort(
      (a, b) =>
        rank(a) - rank(b) ||
        byCode(a.namespace, b.namespace) ||
        byCode(a.tenant, b.tenant) ||
        byCode(a.provider, b.provider) ||
        byCode(a.action_type, b.action_type),
    );
  return { scannedFromMs: start, scannedToMs: end, entries };
}
