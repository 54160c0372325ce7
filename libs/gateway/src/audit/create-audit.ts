import { AnalyticsRollups, CoverageRollups, StateAuditStore, type AuditStore, type IngestingAuditStore, type StateAuditStoreOptions } from '@sluice/audit';
import type { PgAuditStore } from '@sluice/audit-postgres';
import { isBackendConnectionError, type Clock } from '@sluice/core';
import type { SluiceConfig } from '@sluice/config';
import type { StateStore } from '@sluice/state';
import { type Logger, logThrottle, type Metrics } from '@sluice/telemetry';
import { effectiveAuditTtlMs } from '../retention/effective-ttl.js';
import type { RetentionRepository } from '../retention/retention-repository.js';
import { AuditRecorder } from './audit-recorder.js';
import { resolveCompliance, type ComplianceStatus } from './compliance.js';
import { loadPostgresTrail } from './load-postgres-trail.js';
import type { PostgresTrail } from './postgres-trail.js';

export interface AuditParts {
  compliance: ComplianceStatus;
  /** Null when audit is disabled. */
  store: IngestingAuditStore | null;
  /** The PostgreSQL database with audit.backend postgres (the feature migrates it and closes its pool); else null. */
  postgres: PostgresTrail | null;
  analytics: AnalyticsRollups | null;
  /** Rule coverage rollups (GET /v1/rules/coverage); null when audit is disabled. */
  coverage: CoverageRollups | null;
  /** Writes one record per dispatch; absent when audit is disabled. */
  recorder: AuditRecorder | undefined;
}

export interface AuditDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  retention: RetentionRepository;
}

/** How often spooled records are written again while the backend is away. */
const SPOOL_RETRY_MS = 1000;

/** The audit trail, its analytics and coverage rollups and the per-dispatch recorder, from the audit and compliance config. */
export async function createAudit(config: SluiceConfig, deps: AuditDeps): Promise<AuditParts> {
  const compliance = resolveCompliance(config.compliance);
  if (!config.audit.enabled) return { compliance, store: null, postgres: null, analytics: null, coverage: null, recorder: undefined };
  const log = deps.logger.child({ component: 'audit' });
  if (compliance.immutable_audit && config.audit.backend !== 'postgres' && config.state.backend === 'memory') {
    // The in-process trail is bounded: its oldest records go at the cap, and verify then reports the chain broken.
    log.warn(
      { max_records: config.audit.memory_max_records, max_bytes: config.audit.memory_max_bytes },
      'immutable audit on the in-memory trail: records beyond its cap are evicted (use Redis or PostgreSQL to keep every record)',
    );
  }
  const indexErrorLine = logThrottle(30_000, () => deps.clock.now());
  const ingest = {
    clock: deps.clock,
    completeChains: compliance.immutable_audit,
    ingest: { batchSize: config.audit.index_batch_size, claimIdleMs: config.audit.index_claim_after_seconds * 1000 },
    onIndexed: ({ indexed, failedWrites }) => {
      deps.metrics.auditIndexed.inc(indexed);
      if (failedWrites > 0) {
        deps.metrics.auditIndexWritesFailed.inc(failedWrites);
        log.error({ failed_writes: failedWrites }, 'audit index writes failed or records given up on');
      }
    },
    // The indexer retries each round: one line per message per 30 s, a warning while Redis is away.
    onIndexError: (err) => {
      const suppressed = indexErrorLine(err instanceof Error ? err.message : String(err));
      if (suppressed === null) return;
      if (isBackendConnectionError(err)) log.warn({ err, suppressed }, 'audit indexing');
      else log.error({ err, suppressed }, 'audit indexing');
    },
  } satisfies StateAuditStoreOptions;
  const rollupDays = { retentionDays: config.audit.analytics_retention_days, hourlyRetentionDays: config.audit.analytics_hourly_retention_days };
  // On PostgreSQL the ingest keeps the rollups in the database, and queries read them there.
  let postgres: PostgresTrail | null = null;
  let pgStore: PgAuditStore | null = null;
  if (config.audit.backend === 'postgres') {
    const trail = await loadPostgresTrail();
    postgres = trail.openPostgresTrail(config.audit.postgres, 'sluice', process.env, (err) =>
      log.warn({ err }, 'audit database connection lost (reconnects when next used)'),
    );
    pgStore = new trail.PgAuditStore(deps.state, {
      ...ingest,
      ...postgres,
      rollups: rollupDays,
      onPartitionsDropped: (names) => log.info({ partitions: names }, 'audit partitions dropped: every record in them had expired'),
    });
  }
  // The rollups read after the store indexed what is queued; on the state backend the store feeds them as it indexes.
  const catchUp = () => store.catchUp();
  const analytics = new AnalyticsRollups({
    state: deps.state,
    clock: deps.clock,
    ...rollupDays,
    beforeRead: catchUp,
    ...(pgStore === null ? {} : { source: pgStore.analyticsSource() }),
  });
  const coverage = new CoverageRollups({
    state: deps.state,
    clock: deps.clock,
    retentionDays: config.audit.analytics_retention_days,
    beforeRead: catchUp,
    ...(pgStore === null ? {} : { source: pgStore.coverageSource() }),
  });
  const store: IngestingAuditStore =
    pgStore ??
    new StateAuditStore(deps.state, {
      ...ingest,
      observers: [analytics, coverage],
      maxRecords: config.audit.memory_max_records,
      maxBytes: config.audit.memory_max_bytes,
      onEvicted: (n) => deps.metrics.auditEvicted.inc(n),
    });
  // Read at each scrape, the only place it is set: set by this process's batches, the gauge kept
  // what it last saw while other processes emptied the log.
  deps.metrics.refreshOnScrape(async () => deps.metrics.auditIngestBacklog.set(await store.ingestBacklog()));
  const recorder = new AuditRecorder({
    store: store satisfies AuditStore,
    config: config.audit,
    compliance,
    ttlFor: (namespace, tenant) => effectiveAuditTtlMs(deps.retention.forScope(namespace, tenant), config.audit.ttl_seconds, compliance.immutable_audit),
    logger: log,
    now: () => deps.clock.now(),
    onWriteFailed: () => deps.metrics.auditWriteFailures.inc(),
    spool: {
      maxRecords: config.audit.spool_max_records,
      retryMs: SPOOL_RETRY_MS,
      onDropped: () => deps.metrics.auditSpoolDropped.inc(),
      onSizeChanged: (size) => deps.metrics.auditSpooled.set(size),
    },
  });
  return { compliance, store, postgres, analytics, coverage, recorder };
}
