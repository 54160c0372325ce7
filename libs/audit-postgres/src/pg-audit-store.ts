import {
  combinedCoverageSource,
  combinedRollupSource,
  isExpired,
  rollupRetentionMs,
  stateCoverageSource,
  stateRollupSource,
  readChainHead,
  recordIdMs,
  StateAuditStore,
  verifyChainOf,
  type AppendOptions,
  type IngestingAuditStore,
  type AuditVisibility,
  type ChainSource,
  type CoverageSource,
  type RollupSource,
  type StateAuditStoreOptions,
  type StoredRecord,
  type StoreQuery,
} from '@sluice/audit';
import { systemClock, type AuditPage, type AuditRecord, type AuditVerifyInput, type AuditVerifyResult, type Clock, type NewAuditRecord } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import type { Pool } from 'pg';
import { dropExpiredPartitions, ensurePartitionsAhead, KnownPartitions } from './partitions.js';
import { PgAuditRecords } from './pg-records.js';
import { deleteExpiredRollups, pgCoverageSource, pgRollupSource, rollupTables, type RollupRetention } from './pg-rollups.js';
import { quoteSchema } from './sql-identifier.js';

export interface PgAuditStoreOptions extends Pick<StateAuditStoreOptions, 'ingest' | 'onIndexed' | 'onIndexError' | 'scanBudget' | 'completeChains'> {
  pool: Pool;
  schema: string;
  clock?: Clock;
  /**
   * Days the analytics and coverage rollups keep a bucket after it ends (as AnalyticsRollups'
   * options; coverage keeps `retentionDays`). The ingest keeps them in the database
   * (pg-rollups.ts); queries read them through analyticsSource() and coverageSource().
   */
  rollups?: { retentionDays?: number; hourlyRetentionDays?: number };
  /** Days of partitions expire()'s sweep keeps created ahead of today (default 7). */
  partitionsAheadDays?: number;
  /** Told which partitions a retention sweep dropped whole (their rows are counted in expire()'s result). */
  onPartitionsDropped?: (names: readonly string[]) => void;
}

/** Records of one action id a lookup considers. */
const MAX_RECORDS_PER_ACTION_ID = 1000;
/** How often expire() sweeps the partitions (each sweep probes every ended day, and creates the days ahead). */
const PARTITION_SWEEP_EVERY_MS = 60_000;
/**
 * Expired rollup rows are deleted in statements of this many per table, up to
 * ROLLUP_BATCHES_PER_SWEEP a sweep (5 M rows a minute: rows expire at the rate traffic made them,
 * about one per record at most).
 */
const ROLLUP_ROWS_PER_BATCH = 10_000;
const ROLLUP_BATCHES_PER_SWEEP = 500;
/** PostgreSQL's check_violation: a row whose day has no partition (retention dropped it meanwhile). */
const NO_PARTITION = '23514';

/**
 * The audit trail in PostgreSQL. The request path is the state store's (a record and its
 * ingest message, one round trip on Redis; a queue in one process): findable by get() at once.
 * The ingest then moves each batch into audit_records (idempotent insert, so a batch delivered
 * twice is stored once) and out of the state; the same statement adds the records it inserted
 * to the analytics and coverage rollup tables (counted once, however often a batch comes).
 * Queries, rollup reads, chain verification and expiry read the tables, after the ingest has
 * caught up with what was appended before them.
 */
export class PgAuditStore implements IngestingAuditStore {
  private readonly clock: Clock;
  private readonly records: PgAuditRecords;
  private readonly partitions: KnownPartitions;
  private readonly rollupRetention: RollupRetention;
  private readonly rollupTables: { analytics: string; coverage: string };
  /** The way in: records not yet moved, and the ingest that moves them. */
  private readonly intake: StateAuditStore;
  private lastPartitionSweepMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly state: StateStore,
    private readonly opts: PgAuditStoreOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.rollupRetention = rollupRetentionMs(opts.rollups ?? {});
    this.rollupTables = rollupTables(quoteSchema(opts.schema));
    this.records = new PgAuditRecords(opts.pool, opts.schema, { scanBudget: opts.scanBudget, rollups: this.rollupRetention, now: () => this.clock.now() });
    this.partitions = new KnownPartitions(opts.pool, opts.schema);
    this.intake = new StateAuditStore(state, {
      clock: this.clock,
      ...(opts.ingest ? { ingest: opts.ingest } : {}),
      ...(opts.onIndexed ? { onIndexed: opts.onIndexed } : {}),
      ...(opts.onIndexError ? { onIndexError: opts.onIndexError } : {}),
      sink: { store: (records) => this.store(records) },
    });
  }

  /**
   * Where AnalyticsRollups reads: the rollup table the ingest keeps, and the state store's
   * rollups, which hold what releases before schema version 4 counted there (each record is in
   * one or the other, so they add up; empty on an installation that started with version 4).
   */
  analyticsSource(): RollupSource {
    return combinedRollupSource(pgRollupSource(this.opts.pool, this.rollupTables.analytics), stateRollupSource(this.state));
  }

  /** Where CoverageRollups reads: the coverage table the ingest keeps, and (as analyticsSource) the state store's counters. */
  coverageSource(): CoverageSource {
    return combinedCoverageSource(pgCoverageSource(this.opts.pool, this.rollupTables.coverage), stateCoverageSource(this.state));
  }

  /** Starts moving records into the table (processes that consume jobs). */
  startIndexer(): void {
    this.intake.startIndexer();
  }

  ingestBacklog(): Promise<number> {
    return this.intake.ingestBacklog();
  }

  /** Moves what was appended before the call; false when it gave up waiting. */
  catchUp(): Promise<boolean> {
    return this.intake.catchUp();
  }

  close(): Promise<void> {
    return this.intake.close();
  }

  append(record: NewAuditRecord, opts: AppendOptions): Promise<AuditRecord> {
    return this.intake.append(record, opts);
  }

  /**
   * The newest visible record of the id, from the state (not moved yet) and the table. The state
   * is read first: a record moves by insert, then removal from the state, so one that is gone
   * from the state by the time it is looked for is already in the table. With the database
   * away, a record still in the state is the answer (the newest, as a rule: the last appended).
   */
  async get(actionId: string, visible: AuditVisibility = {}): Promise<AuditRecord | null> {
    const pending = await this.intake.get(actionId, visible);
    const now = this.clock.now();
    const rows = await this.records.byActionId(actionId, MAX_RECORDS_PER_ACTION_ID).catch((err: unknown) => {
      if (pending === null) throw err;
      return [];
    });
    const stored = rows.find((r) => !isExpired(r, now) && (visible.scope?.(r) ?? true) && (visible.record?.(r) ?? true));
    if (pending === null || stored === undefined) return pending ?? stored ?? null;
    return newer(pending, stored);
  }

  async query(query: StoreQuery): Promise<AuditPage> {
    await this.intake.catchUp();
    return this.records.query(query, this.clock.now());
  }

  async verify(input: AuditVerifyInput): Promise<AuditVerifyResult> {
    await this.intake.catchUp();
    return verifyChainOf(this.chainOf(input), input, { complete: this.opts.completeChains === true });
  }

  /**
   * Drops the partitions that hold nothing live any more, creates the days ahead and deletes
   * expired rollup rows (at most once a minute), then deletes up to `limit` due rows; returns how
   * many records went, dropped and deleted together. What was appended before is moved first.
   */
  async expire(nowMs: number, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    await this.intake.catchUp();
    let dropped = 0;
    if (nowMs - this.lastPartitionSweepMs >= PARTITION_SWEEP_EVERY_MS) {
      this.lastPartitionSweepMs = nowMs;
      await ensurePartitionsAhead(this.opts.pool, this.opts.schema, nowMs, this.opts.partitionsAheadDays ?? 7);
      const result = await dropExpiredPartitions(this.opts.pool, this.opts.schema, nowMs);
      if (result.dropped.length > 0) {
        this.partitions.forget();
        this.opts.onPartitionsDropped?.(result.dropped);
      }
      dropped = result.rows;
      for (let batch = 0; batch < ROLLUP_BATCHES_PER_SWEEP; batch++) {
        const deleted = await deleteExpiredRollups(this.opts.pool, this.rollupTables, this.rollupRetention, nowMs, ROLLUP_ROWS_PER_BATCH);
        if (deleted < ROLLUP_ROWS_PER_BATCH) break;
      }
    }
    return dropped + (await this.records.deleteDue(nowMs, limit));
  }

  /**
   * The ingest's sink: records (their JSON) into their days' partitions, created when missing
   * (one that expired on its way is stored too, hidden, and counted when expire() deletes it). A
   * record that is not one (its JSON does not parse) is refused; a batch PostgreSQL refuses for
   * its data (a string a column cannot hold, such as a NUL character) is stored record by
   * record, and the ids refused are returned.
   */
  private async store(stored: readonly StoredRecord[]): Promise<ReadonlySet<string>> {
    const refused = new Set<string>();
    const records: AuditRecord[] = [];
    for (const one of stored) {
      const record = 'record' in one ? one.record : parseRecord(one.json);
      if (record === null) refused.add(one.id);
      else records.push(record);
    }
    if (records.length === 0) return refused;
    // The record id is a UUIDv7: its first 48 bits are the dispatch time, all a partition needs.
    const times = records.map((r) => recordIdMs(r.id));
    await this.partitions.ensureFor(times);
    try {
      await this.insertAgainIfDropped(records, times);
    } catch (err) {
      if (!isDataError(err)) throw err;
      for (const [i, record] of records.entries()) {
        await this.insertAgainIfDropped([record], [times[i] as number]).catch((one: unknown) => {
          if (!isDataError(one)) throw one;
          refused.add(record.id);
        });
      }
    }
    return refused;
  }

  /** Inserts; when a partition went missing meanwhile (retention dropped it), creates it and inserts again. */
  private async insertAgainIfDropped(records: readonly AuditRecord[], times: readonly number[]): Promise<void> {
    try {
      await this.records.insert(records);
    } catch (err) {
      if (sqlState(err) !== NO_PARTITION) throw err;
      this.partitions.forget();
      await this.partitions.ensureFor(times);
      await this.records.insert(records);
    }
  }

  private chainOf(input: AuditVerifyInput): ChainSource {
    const scope = { namespace: input.namespace, tenant: input.tenant };
    return {
      edge: (window, newest) => this.records.chainEdge(scope, window, newest),
      links: async (bounds, limit) => (await this.records.chainLinks(scope, bounds, limit)).map((record) => ({ seq: record.sequence_number ?? -1, record })),
      head: () => readChainHead(this.state, scope),
    };
  }
}

/**
 * A stored record's JSON as a record; null when it is not one (never storable). Not decodeRecord:
 * that adds a schema check per record to the ingest's loop, for JSON the append path itself
 * wrote, and PostgreSQL already refuses a record whose columns are missing or of the wrong type.
 */
function parseRecord(json: string): AuditRecord | null {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string' ? (value as AuditRecord) : null;
  } catch {
    return null;
  }
}

function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Refused for what the rows hold (SQLSTATE classes 22 data exception, 23 integrity), not for the database being away. */
function isDataError(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && code !== NO_PARTITION && (code.startsWith('22') || code.startsWith('23'));
}

/** The later of two records by dispatched_at, then id (time-sortable). */
function newer(a: AuditRecord, b: AuditRecord): AuditRecord {
  const at = Date.parse(a.dispatched_at) - Date.parse(b.dispatched_at);
  return at > 0 || (at === 0 && a.id > b.id) ? a : b;
}
