/**
 * The PostgreSQL audit trail at scale, through the real ingest paths, in two phases:
 * 1. the oldest AUDIT_RECORDS - AUDIT_CLUSTER_RECORDS records through the one-process path
 *    (PgAuditStore on the memory backend: appended, queued, flushed into PostgreSQL), timed;
 * 2. the newest AUDIT_CLUSTER_RECORDS through the cluster path: appended as an API replica does
 *    (the record and its message in Redis), then moved into PostgreSQL by AUDIT_INDEXERS
 *    indexer processes (as that many workers: audit-indexer-process.ts), in rounds of
 *    AUDIT_ROUND records: append a round, then time its ingest alone.
 * Then reports bytes per record on disk (table and each index) and p50/p99 of every documented
 * query, with the analytics from the rollup tables and from SQL over the records.
 *   node --conditions=sluice-source --import tsx test/bench/audit-postgres-scale.ts
 * Environment: AUDIT_RECORDS (default 10 000 000), AUDIT_CLUSTER_RECORDS (1 000 000),
 * AUDIT_TENANTS (200), AUDIT_INDEXERS (2), AUDIT_ROUND (250 000), AUDIT_CONCURRENCY (256 appends
 * in flight), AUDIT_ITERATIONS (200 per query), AUDIT_SEED (1), AUDIT_SPAN_HOURS (719: the
 * records' time span, spread evenly). A private redis-server and
 * PostgreSQL (no fsync) are started and stopped at the end, unless REDIS_URL and POSTGRES_URL
 * name servers to use (left running, with the data); AUDIT_LOAD=0 then skips the load and
 * measures what is there. Writes .bench-results/audit-postgres-scale.json and prints a table.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AnalyticsRollups } from '@sluice/audit';
import { migrate, PgAuditStore } from '@sluice/audit-postgres';
import { MemoryStateStore, RedisStateStore } from '@sluice/state';
import pg from 'pg';
import { startPostgresServer, type RunningPostgres } from '../support/postgres-server.js';
import { startRedisServer } from '../support/redis-server.js';
import { machineBusyMs } from './proc-stats.js';
import { draftAt, elapsedMs, envInt, rand, summarize, tenants, TENANTS, type Latency } from './audit-traffic.js';

const RECORDS = envInt('AUDIT_RECORDS', 10_000_000);
const INDEXERS = envInt('AUDIT_INDEXERS', 2);
const CLUSTER_RECORDS = Math.min(RECORDS, envInt('AUDIT_CLUSTER_RECORDS', 1_000_000));
const ROUND = envInt('AUDIT_ROUND', 250_000);
const CONCURRENCY = envInt('AUDIT_CONCURRENCY', 256);
const ITERATIONS = envInt('AUDIT_ITERATIONS', 200);
const WARMUP = 10;
const SCHEMA = 'sluice_audit';
const DAY_MS = 86_400_000;
const TTL_MS = 30 * DAY_MS;
/**
 * Records span the 30 days before the load, less an hour so that none expires while it runs;
 * AUDIT_SPAN_HOURS spans fewer (the rollup tables' size follows the records per hour).
 */
const SPAN_MS = Math.min(TTL_MS - 3_600_000, envInt('AUDIT_SPAN_HOURS', 719) * 3_600_000);
const INGEST_LOG = 'sluice:audit-ingest:{_:_}:log';
const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.bench-results', 'audit-postgres-scale.json');

const LOAD = process.env['AUDIT_LOAD'] !== '0';
let stopIndexers = async (): Promise<unknown> => undefined;

/** An indexer process (audit-indexer-process.ts), once it is connected. */
function startIndexer(redisUrl: string, postgresUrl: string): Promise<ChildProcess> {
  const child = fork(join(dirname(fileURLToPath(import.meta.url)), 'audit-indexer-process.ts'), [redisUrl, postgresUrl, SCHEMA], {
    execArgv: process.execArgv,
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`indexer process exited (${code})`)));
  });
}

/** Stops an indexer's run; its CPU ms during the run. */
function cpuOfRun(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (m: { cpuMs: number }) => resolve(m.cpuMs));
    child.send({ run: false });
  });
}

async function main(): Promise<void> {
  const external = process.env['REDIS_URL'] && process.env['POSTGRES_URL'] ? { redis: process.env['REDIS_URL'], postgres: process.env['POSTGRES_URL'] } : null;
  const redis = external ? { url: external.redis, stop: async () => {} } : await startRedisServer();
  const postgres = external ? null : await startPostgresServer();
  const url = external?.postgres ?? (await (postgres as RunningPostgres).createDatabase('scale'));
  const pools: pg.Pool[] = [];
  const poolOf = (max: number) => {
    const pool = new pg.Pool({ connectionString: url, max });
    pools.push(pool);
    return pool;
  };
  const states: RedisStateStore[] = [];
  const stateOf = async () => {
    const state = await RedisStateStore.connect({ url: redis.url, prefix: 'sluice' });
    states.push(state);
    return state;
  };
  try {
    const admin = poolOf(4);
    await migrate(admin, SCHEMA);
    const appenderState = await stateOf();
    const appender = new PgAuditStore(appenderState, { pool: admin, schema: SCHEMA });
    // The rollups the ingest keeps in the database, read as the gateway reads them.
    const rollups = new AnalyticsRollups({ state: appenderState, source: appender.analyticsSource() });
    // The indexers, as workers: processes of their own, each with its Redis connection and pool.
    const indexers = await Promise.all(Array.from({ length: INDEXERS }, () => startIndexer(redis.url, url)));
    stopIndexers = () => Promise.all(indexers.map((child) => new Promise((exited) => child.once('exit', exited).disconnect())));
    const windowStart = Date.now() - SPAN_MS;
    // Record i sits at i/N of the window (chronological, as traffic arrives), plus jitter.
    const draftOf = (i: number) => draftAt(Math.floor(windowStart + ((i + rand()) * SPAN_MS) / RECORDS));
    const appendAll = (store: PgAuditStore, from: number, to: number) => {
      let next = from;
      return Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < to; i = next++) await store.append(draftOf(i), { ttlMs: TTL_MS, chain: false });
        }),
      );
    };

    // ---- 1. the one-process path ---------------------------------------------------------
    const bulk = LOAD ? RECORDS - CLUSTER_RECORDS : 0;
    let oneProcessSeconds = 0;
    if (bulk > 0) {
      const memoryState = new MemoryStateStore();
      const oneProcess = new PgAuditStore(memoryState, { pool: poolOf(4), schema: SCHEMA });
      const started = process.hrtime.bigint();
      for (let from = 0; from < bulk; from += ROUND) {
        await appendAll(oneProcess, from, Math.min(bulk, from + ROUND));
        console.error(
          `  one process: ${Math.min(bulk, from + ROUND).toLocaleString('en-US')} records, ${Math.round(Math.min(bulk, from + ROUND) / (elapsedMs(started) / 1000)).toLocaleString('en-US')}/s`,
        );
      }
      await oneProcess.close();
      oneProcessSeconds = elapsedMs(started) / 1000;
      await memoryState.close();
    }

    // ---- 2. the cluster path -------------------------------------------------------------
    let appended = LOAD ? bulk : RECORDS;
    let ingestMs = 0;
    let appendMs = 0;
    /** CPU ms during the ingest phases: the indexer processes, this one, redis-server, and the machine (the rest is PostgreSQL). */
    const cpu = { node: 0, own: 0, redis: 0, machine: 0 };
    const redisCpuMs = async () => {
      const info = await appenderState.client.info('cpu');
      const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
      return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
    };
    console.error(
      `audit-postgres-scale: ${RECORDS.toLocaleString('en-US')} records, ${TENANTS} tenants, ${INDEXERS} indexers, rounds of ${ROUND.toLocaleString('en-US')}`,
    );
    while (appended < RECORDS) {
      const round = Math.min(ROUND, RECORDS - appended);
      const fillStart = process.hrtime.bigint();
      const end = appended + round;
      await appendAll(appender, appended, end);
      appendMs += elapsedMs(fillStart);
      appended = end;
      // The round's ingest alone: indexers started, timed until the log is empty.
      const ingestStart = process.hrtime.bigint();
      const [node0, redis0, machine0] = [process.cpuUsage(), await redisCpuMs(), machineBusyMs()];
      for (const child of indexers) child.send({ run: true });
      while ((await appenderState.client.xlen(INGEST_LOG)) > 0) await new Promise((r) => setTimeout(r, 20));
      const took = elapsedMs(ingestStart);
      ingestMs += took;
      const [redis1, machine1] = [await redisCpuMs(), machineBusyMs()];
      const indexersCpuMs = await Promise.all(indexers.map((child) => cpuOfRun(child)));
      const ownUsed = process.cpuUsage(node0);
      // The indexers' CPU, and this process's while it waited (its polling is part of the rest).
      cpu.node += indexersCpuMs.reduce((a, b) => a + b, 0);
      cpu.own += (ownUsed.user + ownUsed.system) / 1000;
      cpu.redis += redis1 - redis0;
      cpu.machine += machine1 - machine0;
      console.error(
        `  cluster: ${appended.toLocaleString('en-US')} records, round ingested at ${Math.round(round / (took / 1000)).toLocaleString('en-US')}/s, overall ${Math.round((appended - bulk) / (ingestMs / 1000)).toLocaleString('en-US')}/s`,
      );
    }

    console.error('audit-postgres-scale: VACUUM ANALYZE, sizes');
    await admin.query(`VACUUM ANALYZE ${SCHEMA}.audit_records`);
    const sizes = await diskSizes(admin);
    const rows = Number((await admin.query(`SELECT count(*) AS n FROM ${SCHEMA}.audit_records`)).rows[0].n);
    if (rows !== RECORDS) throw new Error(`expected ${RECORDS} rows, found ${rows}`);

    // ---- queries -----------------------------------------------------------------------
    const reader = new PgAuditStore(appenderState, { pool: poolOf(4), schema: SCHEMA });
    const sqlPool = poolOf(2);
    const now = Date.now();
    const randomTenant = () => tenants[Math.floor(rand() * tenants.length)] as (typeof tenants)[number];
    const last = (days: number) => ({ fromMs: now - days * DAY_MS, toMs: now });
    const queries: Record<string, Latency & { description: string; avg_records: number }> = {};
    const measure = async (name: string, description: string, run: () => Promise<number>) => {
      console.error(`  ${name}`);
      for (let i = 0; i < WARMUP; i++) await run();
      const samples: number[] = [];
      let found = 0;
      for (let i = 0; i < ITERATIONS; i++) {
        const t0 = process.hrtime.bigint();
        found += await run();
        samples.push(elapsedMs(t0));
      }
      queries[name] = { description, ...summarize(samples), avg_records: Math.round((found / ITERATIONS) * 10) / 10 };
    };
    const page = (q: Parameters<PgAuditStore['query']>[0]) => reader.query(q).then((p) => p.records.length);
    const ids = (await admin.query<{ action_id: string }>(`SELECT action_id FROM ${SCHEMA}.audit_records TABLESAMPLE SYSTEM (0.1) LIMIT 1000`)).rows;
    await measure('tenant_24h', 'one tenant, last 24 h, page of 50 with its total', () => {
      const t = randomTenant();
      return page({ namespace: t.namespace, tenant: t.tenant, ...last(1), limit: 50, offset: 0 });
    });
    await measure('tenant_24h_outcome', 'one tenant, last 24 h, outcome=failed, page of 50 with its total', () => {
      const t = randomTenant();
      return page({ namespace: t.namespace, tenant: t.tenant, outcome: 'failed', ...last(1), limit: 50, offset: 0 });
    });
    await measure('tenant_7d', 'one tenant, last 7 days, page of 50 with its total', () => {
      const t = randomTenant();
      return page({ namespace: t.namespace, tenant: t.tenant, ...last(7), limit: 50, offset: 0 });
    });
    await measure('tenant_cursor_5', 'one tenant, 30 days, the 5th page by cursor', async () => {
      const t = randomTenant();
      let cursor: string | undefined;
      let n = 0;
      for (let p = 0; p < 5; p++) {
        const res = await reader.query({ namespace: t.namespace, tenant: t.tenant, limit: 50, offset: 0, ...(cursor ? { cursor } : {}) });
        n = res.records.length;
        cursor = res.next_cursor;
        if (!cursor) break;
      }
      return n;
    });
    await measure('by_action_id', 'GET /v1/audit/{action_id}', async () =>
      (await reader.get(ids[Math.floor(rand() * ids.length)]?.action_id ?? 'none')) ? 1 : 0,
    );
    await measure('global_24h', 'all tenants, last 24 h, page of 50 with its total', () => page({ ...last(1), limit: 50, offset: 0 }));
    await measure('provider_24h', 'all tenants, provider=sms, last 24 h, page of 50 with its total', () =>
      page({ provider: 'sms', ...last(1), limit: 50, offset: 0 }),
    );
    await measure('analytics_tenant_7d_rollups', 'analytics volume, daily, 7 days, one tenant (rollup table)', async () => {
      const t = randomTenant();
      return (await rollups.query({ metric: 'volume', interval: 'daily', namespace: t.namespace, tenant: t.tenant, fromMs: now - 7 * DAY_MS, toMs: now }))
        .buckets.length;
    });
    await measure('analytics_tenant_7d_sql', 'analytics volume, daily, 7 days, one tenant (SQL: date_trunc, count)', async () => {
      const t = randomTenant();
      const res = await sqlPool.query(
        `SELECT date_trunc('day', dispatched_at) AS day, count(*) FROM ${SCHEMA}.audit_records WHERE scope_key = hashtextextended($1::text || '/' || $2::text, 0) AND namespace = $1 AND tenant = $2 AND dispatched_at >= $3 GROUP BY 1`,
        [t.namespace, t.tenant, new Date(now - 7 * DAY_MS).toISOString()],
      );
      return res.rows.length;
    });
    const cpus = os.cpus();
    const result = {
      benchmark: 'audit-postgres-scale',
      date: new Date().toISOString(),
      records: RECORDS,
      tenants: TENANTS,
      indexers: INDEXERS,
      round: ROUND,
      machine: {
        cpus: cpus.length,
        cpu_model: cpus[0]?.model ?? 'unknown',
        node: process.version,
        postgres: (await admin.query('SHOW server_version')).rows[0].server_version,
      },
      // Null when AUDIT_LOAD=0 (queries of data loaded before).
      one_process: LOAD
        ? { records: bulk, records_per_second: bulk > 0 ? Math.round(bulk / oneProcessSeconds) : null, seconds: Math.round(oneProcessSeconds) }
        : null,
      ingest: LOAD
        ? {
            records: CLUSTER_RECORDS,
            records_per_second: Math.round(CLUSTER_RECORDS / (ingestMs / 1000)),
            seconds: Math.round(ingestMs / 100) / 10,
            append_records_per_second: Math.round(CLUSTER_RECORDS / (appendMs / 1000)),
            cpu_us_per_record: {
              indexers_node: Math.round((cpu.node * 1000) / CLUSTER_RECORDS),
              redis: Math.round((cpu.redis * 1000) / CLUSTER_RECORDS),
              postgres_and_rest: Math.round(((cpu.machine - cpu.node - cpu.own - cpu.redis) * 1000) / CLUSTER_RECORDS),
            },
          }
        : null,
      disk: sizes,
      queries,
    };
    mkdirSync(dirname(RESULTS_FILE), { recursive: true });
    writeFileSync(RESULTS_FILE, `${JSON.stringify(result, null, 2)}\n`);
    const lines = [
      `## audit-postgres-scale: ${RECORDS.toLocaleString('en-US')} records, ${TENANTS} tenants, ${INDEXERS} indexers (${result.date.slice(0, 10)})`,
      '',
      ...(result.one_process && result.ingest
        ? [
            `One process (append + ingest): ${result.one_process.records.toLocaleString('en-US')} records at ${result.one_process.records_per_second?.toLocaleString('en-US') ?? '-'}/s. Cluster ingest: ${CLUSTER_RECORDS.toLocaleString('en-US')} records at ${result.ingest.records_per_second.toLocaleString('en-US')} records/s (CPU µs per record: indexers ${result.ingest.cpu_us_per_record.indexers_node}, Redis ${result.ingest.cpu_us_per_record.redis}, PostgreSQL and the rest ${result.ingest.cpu_us_per_record.postgres_and_rest}).`,
          ]
        : []),
      `On disk ${sizes.bytes_per_record} B per record (table ${sizes.table_bytes_per_record} B, indexes ${sizes.index_bytes_per_record} B); the rollup tables ${sizes.rollups.bytes_per_record} B more (analytics ${sizes.rollups.analytics_bytes_per_record}, coverage ${sizes.rollups.coverage_bytes_per_record}).`,
      '',
      '| query | p50 ms | p99 ms | records |',
      '|---|---|---|---|',
      ...Object.values(queries).map((q) => `| ${q.description} | ${q.p50_ms} | ${q.p99_ms} | ${q.avg_records} |`),
    ];
    console.log(lines.join('\n'));
    console.error(`audit-postgres-scale: results written to ${RESULTS_FILE}`);
    await reader.close();
    await appender.close();
  } finally {
    await stopIndexers();
    for (const state of states) await state.close().catch(() => {});
    for (const pool of pools) await pool.end().catch(() => {});
    await postgres?.stop();
    await redis.stop();
  }
}

/** Bytes on disk per record: table (with TOAST) and each index, summed over the partitions. */
async function diskSizes(pool: pg.Pool) {
  const { rows } = await pool.query<{ name: string; kind: string; bytes: string }>(
    `SELECT CASE WHEN c.relkind = 'i' THEN regexp_replace(c.relname, '^audit_records_p\\d+_', '') ELSE 'table' END AS name, c.relkind AS kind,
            sum(CASE WHEN c.relkind = 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END) AS bytes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname LIKE 'audit_records_p%' AND c.relkind IN ('r', 'i')
     GROUP BY 1, 2 ORDER BY 3 DESC`,
    [SCHEMA],
  );
  const perRecord = (bytes: number) => Math.round((bytes / RECORDS) * 10) / 10;
  const table = rows.filter((r) => r.kind === 'r').reduce((s, r) => s + Number(r.bytes), 0);
  const indexes = Object.fromEntries(rows.filter((r) => r.kind === 'i').map((r) => [r.name, perRecord(Number(r.bytes))]));
  const indexBytes = rows.filter((r) => r.kind === 'i').reduce((s, r) => s + Number(r.bytes), 0);
  // The analytics and coverage rollups, apart: counters per hour, day and tuple, whose size follows the tuples more than the records.
  const rollups = await pool.query<{ analytics: string; coverage: string; hourly: string; daily: string; coverage_rows: string }>(
    `SELECT pg_total_relation_size('${SCHEMA}.audit_rollups') AS analytics, pg_total_relation_size('${SCHEMA}.audit_coverage') AS coverage,
            (SELECT count(*) FROM ${SCHEMA}.audit_rollups WHERE granularity = 'h') AS hourly, (SELECT count(*) FROM ${SCHEMA}.audit_rollups WHERE granularity = 'd') AS daily,
            (SELECT count(*) FROM ${SCHEMA}.audit_coverage) AS coverage_rows`,
  );
  const r = rollups.rows[0] as (typeof rollups.rows)[number];
  return {
    bytes_per_record: perRecord(table + indexBytes),
    table_bytes_per_record: perRecord(table),
    index_bytes_per_record: perRecord(indexBytes),
    indexes_bytes_per_record: indexes,
    rollups: {
      bytes_per_record: perRecord(Number(r.analytics) + Number(r.coverage)),
      analytics_bytes_per_record: perRecord(Number(r.analytics)),
      coverage_bytes_per_record: perRecord(Number(r.coverage)),
      rows: { hourly: Number(r.hourly), daily: Number(r.daily), coverage: Number(r.coverage_rows) },
    },
  };
}

await main();
