import { AuditFilterFields, type AuditPage, type AuditRecord } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import type { StoreQuery } from './audit-store.js';
import { openPager } from './merged-index-pager.js';
import { planQuery, type Filters } from './query-planner.js';
import { decodeCursor, encodeCursor, type CursorPosition } from './query-cursor.js';
import { isExpired } from './record-codec.js';
import { compactId } from './record-id.js';
import type { RecordReader } from './record-reader.js';
import { memberRecordId } from './record-ref.js';

/** Index entries one request may examine; past it the page ends early with a cursor to go on. */
const SCAN_BUDGET = 20_000;
const MIN_BATCH = 50;
const MAX_BATCH = 1000;

export interface QueryDeps {
  store: StateStore;
  reader: RecordReader;
  nowMs: number;
  /** Default SCAN_BUDGET. */
  scanBudget?: number;
}

/**
 * One page of records, newest first. Walks the planned index in batches, loads the records and
 * keeps those that exist, have not expired, match every filter and pass `visible`, skipping
 * `offset` of them, until the page is full, the index is exhausted or the scan budget is spent.
 */
export async function runQuery(deps: QueryDeps, q: StoreQuery): Promise<AuditPage> {
  const filters = filtersOf(q);
  const cursor = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  // Plan on what is left to read: a cursor moves the upper bound down.
  const toMs = cursor === undefined ? q.toMs : Math.min(q.toMs ?? Infinity, cursor.t);
  const window = { ...(q.fromMs !== undefined ? { fromMs: q.fromMs } : {}), ...(toMs !== undefined ? { toMs } : {}) };
  const plan = await planQuery(deps.store, filters, window, cursor === undefined && q.visible === undefined);
  // Every index entry is a match (bar records missing or expired but not yet reaped).
  const indexAnswers = plan.coversAll && q.visible === undefined;
  let skip = cursor === undefined ? q.offset : (cursor.s ?? 0);
  // The index answers an offset itself when it is one key (not the shards of one).
  const indexOffset = indexAnswers && cursor === undefined && plan.index.keys.length === 1 ? skip : 0;
  if (indexOffset > 0) skip = 0;

  const pager = openPager(deps.store, plan.index.keys, {
    ...(q.fromMs !== undefined ? { min: q.fromMs } : {}),
    ...(q.toMs !== undefined ? { max: q.toMs } : {}),
    ...(cursor !== undefined ? { after: { score: cursor.t, position: compactId(cursor.i) } } : {}),
    offset: indexOffset,
  });
  const batchSize = Math.min(MAX_BATCH, Math.max(MIN_BATCH, indexAnswers ? q.limit + 1 : (q.limit + 1) * 4));
  const records: AuditRecord[] = [];
  let lastReturned: CursorPosition | null = null;
  let lastScanned: CursorPosition | null = null;
  let scanned = 0;
  let full = false;
  const budget = deps.scanBudget ?? SCAN_BUDGET;

  scan: while (!pager.done && scanned < budget) {
    const entries = await pager.next(batchSize);
    // Only new entries count: rereading ties above a cursor must not starve the page of progress.
    scanned += entries.length;
    const loaded = await deps.reader.readMembers(
      entries.map((e) => e.member),
      plan.index.scope,
    );
    for (const [i, entry] of entries.entries()) {
      const record = loaded[i] ?? null;
      if (record !== null && isExpired(record, deps.nowMs) === false && matches(record, filters) && (q.visible?.(record) ?? true)) {
        if (skip > 0) skip--;
        else if (records.length === q.limit) {
          full = true; // one match beyond the page: there is a next page
          break scan;
        } else {
          records.push(record);
          lastReturned = { t: entry.score, i: record.id };
        }
      }
      const id = memberRecordId(entry.member);
      if (id !== null) lastScanned = { t: entry.score, i: id };
    }
  }

  const page: AuditPage = { records, limit: q.limit, offset: cursor === undefined ? q.offset : 0 };
  if (cursor === undefined && indexAnswers && plan.count !== null) page.total = plan.count;
  // Budget spent: resume after what was examined (or where this page began).
  const next = full ? lastReturned : pager.done ? null : (lastScanned ?? (cursor === undefined ? null : { t: cursor.t, i: cursor.i }));
  if (next !== null) page.next_cursor = encodeCursor(!full && skip > 0 ? { ...next, s: skip } : next);
  return page;
}

function filtersOf(q: StoreQuery): Filters {
  const filters: Filters = {};
  for (const field of AuditFilterFields) {
    const value = q[field];
    if (value !== undefined) filters[field] = value;
  }
  return filters;
}

/** All filters are rechecked: index membership is a hint, the stored record is the truth. */
function matches(record: AuditRecord, filters: Filters): boolean {
  for (const field of AuditFilterFields) {
    const value = filters[field];
    if (value !== undefined && record[field] !== value) return false;
  }
  return true;
}
