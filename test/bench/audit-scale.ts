/**
 * Audit trail at scale on Redis: loads AUDIT_RECORDS realistic records through
 * StateAuditStore.append and AnalyticsRollups.record (as the gateway's recorder does), then
 * reports load throughput, Redis memory per record (split by key kind) and client-side query
 * latency. Run with
 *   node --conditions=sluice-source --import tsx test/bench/audit-scale.ts
 * Environment: AUDIT_RECORDS (default 1 000 000), AUDIT_TENANTS (200), AUDIT_CONCURRENCY (256
 * appends in flight), AUDIT_ITERATIONS (200 per query), AUDIT_SEED (1). Without REDIS_URL a
 * private redis-server (no persistence) is started on a free port and stopped at the end; with
 * REDIS_URL the records go under a fresh key prefix, deleted at the end unless AUDIT_KEEP=1
 * (memory numbers are then only as clean as that server is quiet).
 * Prints a markdown table and writes .bench-results/audit-scale.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AnalyticsRollups, StateAuditStore, auditKeys } from '@sluice/audit';
import type { AuditPage } from '@sluice/core';
import { RedisStateStore } from '@sluice/state';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { draftAt, elapsedMs, envInt, hex, rand, SEED, summarize, tenantCdf, tenants, TENANTS, type Latency, type Tenant } from './audit-traffic.js';

const RECORDS = envInt('AUDIT_RECORDS', 1_000_000);
const CONCURRENCY = envInt('AUDIT_CONCURRENCY', 256);
const ITERATIONS = envInt('AUDIT_ITERATIONS', 200);
const WARMUP = 10;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const TTL_MS = 30 * DAY_MS;
/** Records span the 30 days before the load, less one hour so none expires while the script runs. */
const SPAN_MS = TTL_MS - HOUR_MS;

const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.bench-results', 'audit-scale.json');

type Client = RedisStateStore['client'];

async function info(client: Client, section: string): Promise<Record<string, string>> {
  const text = await client.info(section);
  const out: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) out[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return out;
}

async function usedMemory(client: Client): Promise<number> {
  return Number((await info(client, 'memory'))['used_memory']);
}

async function redisCpuSeconds(client: Client): Promise<number> {
  const cpu = await info(client, 'cpu');
  return Number(cpu['used_cpu_user']) + Number(cpu['used_cpu_sys']);
}

/** Calls and microseconds per command since the server started (INFO commandstats). */
async function commandStats(client: Client): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const [key, value] of Object.entries(await info(client, 'commandstats'))) {
    const calls = /calls=(\d+)/.exec(value)?.[1];
    const usec = /usec=(\d+)/.exec(value)?.[1];
    if (calls !== undefined && usec !== undefined) out.set(key.replace(/^cmdstat_/, ''), { calls: Number(calls), usec: Number(usec) });
  }
  return out;
}

/** Busy CPU seconds of the whole machine (Linux /proc/stat; null elsewhere), to see what else ran. */
function machineBusySeconds(): number | null {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return (user + nice + system + irq + softirq + steal) / 100;
  } catch {
    return null;
  }
}

async function execAll(client: Client, commands: (string | number)[][]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let i = 0; i < commands.length; i += 500) {
    const results = (await client.pipeline(commands.slice(i, i + 500) as [string, ...(string | number)[]][]).exec()) ?? [];
    for (const [err, value] of results) {
      if (err) throw err;
      out.push(value);
    }
  }
  return out;
}

/** What a kind of key is for, in the memory split. */
const CATEGORY: Record<string, 'records' | 'action pointers' | 'indexes' | 'rollups'> = {
  [auditKeys.KIND.record]: 'records',
  [auditKeys.KIND.actionPointer]: 'action pointers',
  [auditKeys.KIND.tenantIndex]: 'indexes',
  [auditKeys.KIND.globalIndex]: 'indexes',
  [auditKeys.KIND.expiryIndex]: 'indexes',
  [auditKeys.KIND.chainIndex]: 'indexes',
  [auditKeys.KIND.chainHead]: 'indexes',
  [auditKeys.KIND.scopeCode]: 'indexes',
  analytics: 'rollups',
  'analytics-ix': 'rollups',
  'analytics-tix': 'rollups',
};

/** Rollup kinds, split by granularity in the census. */
const ROLLUP_KINDS = new Set(['analytics', 'analytics-ix', 'analytics-tix']);

/** Sorted-set kinds (index entries are counted with ZCARD). */
const ZSET_KINDS = new Set<string>([
  auditKeys.KIND.tenantIndex,
  auditKeys.KIND.globalIndex,
  auditKeys.KIND.expiryIndex,
  auditKeys.KIND.chainIndex,
  'analytics-ix',
  'analytics-tix',
]);

/** The kind of a rendered key; rollup kinds split by granularity (their retentions differ). */
function kindOf(key: string, prefix: string): string {
  const kind = key.slice(prefix.length + 1, key.indexOf(':', prefix.length + 1));
  if (!ROLLUP_KINDS.has(kind)) return kind;
  return `${kind} ${key.charAt(key.indexOf('}:') + 2) === 'h' ? 'hourly' : 'daily'}`;
}

interface KindCensus {
  kind: string;
  category: string;
  keys: number;
  measured_keys: number;
  /** Sorted-set members (scaled like the bytes); null for plain values. */
  entries: number | null;
  /** MEMORY USAGE (SAMPLES 0) of the measured keys, scaled to all keys of the kind. */
  estimated_bytes: number;
  bytes_per_key: number;
  bytes_per_record: number;
}

/**
 * SCANs the prefix, counts keys per kind and measures MEMORY USAGE: every key of kinds with up
 * to 5000 keys (the indexes), a reservoir sample of 2000 keys of the others (records, pointers,
 * counters). MEMORY USAGE counts the value, the key name and the dict entry, not the keyspace's
 * hash-table buckets or the expiry entries of keys with a TTL.
 */
async function census(client: Client, prefix: string): Promise<KindCensus[]> {
  const SAMPLE = 2000;
  const kinds = new Map<string, { count: number; sample: string[]; all: string[] | null }>();
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 10_000);
    cursor = next;
    for (const key of keys) {
      const kind = kindOf(key, prefix);
      let entry = kinds.get(kind);
      if (entry === undefined) {
        entry = { count: 0, sample: [], all: [] };
        kinds.set(kind, entry);
      }
      entry.count++;
      if (entry.all !== null) {
        entry.all.push(key);
        if (entry.all.length > 5000) entry.all = null;
      }
      if (entry.sample.length < SAMPLE) entry.sample.push(key);
      else {
        const j = Math.floor(rand() * entry.count);
        if (j < SAMPLE) entry.sample[j] = key;
      }
    }
  } while (cursor !== '0');

  const out: KindCensus[] = [];
  for (const [kind, entry] of [...kinds].sort(([a], [b]) => a.localeCompare(b))) {
    const keys = entry.all ?? entry.sample;
    const sizes = await execAll(
      client,
      keys.map((k) => ['memory', 'usage', k, 'samples', 0]),
    );
    const measured = sizes.reduce<number>((s, v) => s + (typeof v === 'number' ? v : 0), 0);
    const estimated = Math.round((measured / keys.length) * entry.count);
    const baseKind = kind.split(' ')[0] ?? kind;
    let entries: number | null = null;
    if (ZSET_KINDS.has(baseKind)) {
      const cards = await execAll(
        client,
        keys.map((k) => ['zcard', k]),
      );
      entries = Math.round((cards.reduce<number>((s, v) => s + (typeof v === 'number' ? v : 0), 0) / keys.length) * entry.count);
    }
    out.push({
      kind,
      category: CATEGORY[baseKind] ?? 'other',
      keys: entry.count,
      measured_keys: keys.length,
      entries,
      estimated_bytes: estimated,
      bytes_per_key: Math.round(measured / keys.length),
      bytes_per_record: Math.round((estimated / RECORDS) * 10) / 10,
    });
  }
  return out;
}

async function deletePrefix(client: Client, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 10_000);
    cursor = next;
    if (keys.length > 0) await client.unlink(...keys);
  } while (cursor !== '0');
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const external = process.env['REDIS_URL'];
  let server: RunningRedis | null = null;
  if (external === undefined || external === '') server = await startRedisServer();
  const url = server?.url ?? (external as string);
  // The default state.prefix on a private server (key names as in production); a fresh one on a shared server.
  const prefix = server !== null ? 'sluice' : `sluice-bench-${hex(3)}`;
  const state = await RedisStateStore.connect({ url, prefix, clientName: 'audit-scale' });
  const client = state.client;
  try {
    const serverInfo = await info(client, 'server');
    const rollups = new AnalyticsRollups({ state, beforeRead: () => store.catchUp() });
    // As the gateway's: the rollups are built by the indexer with the record's index entries.
    const store = new StateAuditStore(state, { observers: [rollups] });
    store.startIndexer();

    // ---- load ----------------------------------------------------------------------------
    const memoryBefore = await usedMemory(client);
    const loadStartMs = Date.now();
    const windowStart = loadStartMs - SPAN_MS;
    const appendMs = new Float32Array(RECORDS);
    let payloadBytes = 0;
    let recordBytes = 0;
    let next = 0;
    let done = 0;
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const machine0 = machineBusySeconds();
    const redisCpu0 = await redisCpuSeconds(client);
    const started = process.hrtime.bigint();
    let lastReport = started;
    console.error(
      `audit-scale: loading ${RECORDS.toLocaleString('en-US')} records for ${TENANTS} tenants into ${server ? 'a private redis-server' : 'REDIS_URL'} (prefix ${prefix}), ${CONCURRENCY} in flight`,
    );

    const worker = async (): Promise<void> => {
      for (;;) {
        const i = next++;
        if (i >= RECORDS) return;
        // Chronological, as traffic arrives: record i sits at i/N of the window, plus jitter.
        const draft = draftAt(Math.floor(windowStart + ((i + rand()) * SPAN_MS) / RECORDS));
        const t0 = process.hrtime.bigint();
        const stored = await store.append(draft, { ttlMs: TTL_MS, chain: false });
        appendMs[i] = elapsedMs(t0);
        if (i % 1000 === 0) {
          payloadBytes += Buffer.byteLength(JSON.stringify(stored.action_payload));
          recordBytes += Buffer.byteLength(JSON.stringify(stored));
        }
        done++;
        if (done % 50_000 === 0) {
          const now = process.hrtime.bigint();
          const rate = Math.round(50_000 / (Number(now - lastReport) / 1e9));
          lastReport = now;
          console.error(`  ${done.toLocaleString('en-US')} records, ${rate.toLocaleString('en-US')}/s, ${(elapsedMs(started) / 1000).toFixed(0)} s`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await store.catchUp();
    // Loaded and indexed: the queries below index nothing new, so the loop can stop.
    await store.close();
    const loadMs = elapsedMs(started);
    const nodeCpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);
    const machine1 = machineBusySeconds();
    const redisCpu = (await redisCpuSeconds(client)) - redisCpu0;
    const sampled = Math.ceil(RECORDS / 1000);

    // ---- memory --------------------------------------------------------------------------
    const memoryAfter = await usedMemory(client);
    const memInfo = await info(client, 'memory');
    const keyspace = await info(client, 'keyspace');
    const dbsize = await client.dbsize();
    console.error('audit-scale: measuring key kinds (SCAN + MEMORY USAGE)');
    const kinds = await census(client, prefix);
    const delta = memoryAfter - memoryBefore;
    const byCategory: Record<string, number> = {};
    for (const k of kinds) byCategory[k.category] = (byCategory[k.category] ?? 0) + k.estimated_bytes;
    const attributed = Object.values(byCategory).reduce((a, b) => a + b, 0);
    // MEMORY USAGE leaves out the keyspace's hash-table buckets, expiry entries and a sorted set's own bucket array.
    byCategory['not attributed (hash tables, expiry entries)'] = delta - attributed;
    const perRecord = (bytes: number) => Math.round((bytes / RECORDS) * 10) / 10;

    // Sanity: every record is in the global index.
    const all = await store.query({ limit: 1, offset: 0 });
    if (all.total !== RECORDS) throw new Error(`expected ${RECORDS} records in the global index, found ${all.total ?? 'no total'}`);

    // ---- queries -------------------------------------------------------------------------
    console.error(`audit-scale: ${ITERATIONS} iterations per query (+${WARMUP} warm-up)`);
    const randomTenant = () => tenants[Math.floor(rand() * tenants.length)] as Tenant;
    interface QueryResult extends Latency {
      description: string;
      avg_records: number;
      /** Redis commands per query and the server time they took (INFO commandstats; other clients of a shared server count too). */
      redis_commands?: number;
      redis_ms?: number;
      redis_command_mix?: Record<string, number>;
    }
    const queries: Record<string, QueryResult> = {};

    const measure = async (name: string, description: string, run: () => Promise<number>, afterWarmup?: () => void) => {
      console.error(`  ${name}`);
      for (let i = 0; i < WARMUP; i++) await run();
      afterWarmup?.();
      const stats0 = await commandStats(client);
      const samples: number[] = [];
      let rows = 0;
      for (let i = 0; i < ITERATIONS; i++) {
        const t0 = process.hrtime.bigint();
        rows += await run();
        samples.push(elapsedMs(t0));
      }
      const stats1 = await commandStats(client);
      let calls = 0;
      let usec = 0;
      const mix: Record<string, number> = {};
      for (const [cmd, after] of stats1) {
        if (cmd === 'info') continue;
        const before = stats0.get(cmd) ?? { calls: 0, usec: 0 };
        if (after.calls === before.calls) continue;
        calls += after.calls - before.calls;
        usec += after.usec - before.usec;
        mix[cmd] = Math.round(((after.calls - before.calls) / ITERATIONS) * 10) / 10;
      }
      queries[name] = {
        description,
        ...summarize(samples),
        avg_records: Math.round((rows / ITERATIONS) * 10) / 10,
        redis_commands: Math.round((calls / ITERATIONS) * 10) / 10,
        redis_ms: Math.round((usec / ITERATIONS / 1000) * 1000) / 1000,
        redis_command_mix: mix,
      };
    };

    const last24h = () => ({ fromMs: Date.now() - DAY_MS, toMs: Date.now() });
    await measure('tenant_24h', 'tenant, last 24 h, limit 50, newest first', async () => {
      const t = randomTenant();
      return (await store.query({ namespace: t.namespace, tenant: t.tenant, ...last24h(), limit: 50, offset: 0 })).records.length;
    });
    await measure('tenant_24h_outcome', 'tenant, last 24 h, outcome=failed, limit 50', async () => {
      const t = randomTenant();
      return (await store.query({ namespace: t.namespace, tenant: t.tenant, outcome: 'failed', ...last24h(), limit: 50, offset: 0 })).records.length;
    });
    // Deep paging: pages 1-5 of a tenant's whole trail by cursor; the 5th page timed alone and all five.
    const fifthPage: number[] = [];
    await measure(
      'tenant_cursor_5_pages',
      'tenant, all 30 days, 5 pages of 50 by cursor (total time)',
      async () => {
        const t = randomTenant();
        let page: AuditPage | null = null;
        let rows = 0;
        for (let p = 0; p < 5; p++) {
          if (p > 0 && page?.next_cursor === undefined) break;
          const t0 = process.hrtime.bigint();
          page = await store.query({
            namespace: t.namespace,
            tenant: t.tenant,
            limit: 50,
            offset: 0,
            ...(page?.next_cursor ? { cursor: page.next_cursor } : {}),
          });
          if (p === 4) fifthPage.push(elapsedMs(t0));
          rows += page.records.length;
        }
        return rows;
      },
      () => (fifthPage.length = 0),
    );
    if (fifthPage.length > 0) queries['tenant_cursor_page_5'] = { description: 'the 5th page alone (cursor)', ...summarize(fifthPage), avg_records: 50 };
    await measure('global_24h', 'all tenants, last 24 h, limit 50', async () => (await store.query({ ...last24h(), limit: 50, offset: 0 })).records.length);
    const last7d = () => ({ fromMs: Date.now() - 7 * DAY_MS, toMs: Date.now() });
    await measure('analytics_tenant_7d_volume', 'analytics volume, daily, 7 days, one tenant', async () => {
      const t = randomTenant();
      return (await rollups.query({ metric: 'volume', interval: 'daily', namespace: t.namespace, tenant: t.tenant, ...last7d() })).buckets.length;
    });
    await measure('analytics_tenant_only_7d_volume', 'analytics volume, daily, 7 days, tenant only (a single-tenant caller)', async () => {
      const t = randomTenant();
      return (await rollups.query({ metric: 'volume', interval: 'daily', tenant: t.tenant, ...last7d() })).buckets.length;
    });
    await measure('analytics_tenant_7d_latency', 'analytics latency, daily, 7 days, one tenant', async () => {
      const t = randomTenant();
      return (await rollups.query({ metric: 'latency', interval: 'daily', namespace: t.namespace, tenant: t.tenant, ...last7d() })).buckets.length;
    });
    await measure('analytics_all_7d_volume_by_provider', 'analytics volume, daily, 7 days, all tenants, group_by=provider', async () => {
      return (await rollups.query({ metric: 'volume', interval: 'daily', groupBy: 'provider', ...last7d() })).buckets.length;
    });

    // ---- report --------------------------------------------------------------------------
    const cpus = os.cpus();
    const result = {
      benchmark: 'audit-scale',
      date: new Date().toISOString(),
      records: RECORDS,
      tenants: TENANTS,
      concurrency: CONCURRENCY,
      seed: SEED,
      machine: {
        cpus: cpus.length,
        cpu_model: cpus[0]?.model ?? 'unknown',
        memory_gib: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        redis: serverInfo['redis_version'],
        redis_allocator: memInfo['mem_allocator'],
        redis_private: server !== null,
      },
      data: {
        window_days: SPAN_MS / DAY_MS,
        ttl_days: TTL_MS / DAY_MS,
        avg_payload_bytes: Math.round(payloadBytes / sampled),
        avg_record_json_bytes: Math.round(recordBytes / sampled),
        largest_tenant_share: Math.round((tenantCdf[0] ?? 0) * 1000) / 1000,
      },
      load: {
        seconds: Math.round(loadMs / 100) / 10,
        records_per_second: Math.round(RECORDS / (loadMs / 1000)),
        record_write_latency: summarize(appendMs),
        node_cpu_cores: Math.round(((nodeCpu.user + nodeCpu.system) / 1e3 / loadMs) * 100) / 100,
        redis_cpu_cores: Math.round((redisCpu / (loadMs / 1000)) * 100) / 100,
        /** Share of the load the main thread spent running JS (1 = saturated). */
        node_event_loop_utilization: Math.round(elu.utilization * 100) / 100,
        /** Busy cores of the whole machine during the load (null when /proc/stat is missing): above node + redis-server, other processes competed. */
        machine_busy_cores: machine0 === null || machine1 === null ? null : Math.round(((machine1 - machine0) / (loadMs / 1000)) * 100) / 100,
      },
      memory: {
        used_memory_before: memoryBefore,
        used_memory_after: memoryAfter,
        used_memory_rss_after: Number(memInfo['used_memory_rss']),
        bytes_per_record: perRecord(delta),
        dbsize,
        keyspace: keyspace['db0'] ?? '',
        by_category_bytes_per_record: Object.fromEntries(Object.entries(byCategory).map(([k, v]) => [k, perRecord(v)])),
        kinds,
      },
      queries,
    };

    const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
    const lines = [
      `## audit-scale: ${RECORDS.toLocaleString('en-US')} records, ${TENANTS} tenants (${result.date.slice(0, 10)})`,
      '',
      `Machine: ${cpus.length} × ${result.machine.cpu_model}, ${result.machine.memory_gib} GiB; Node ${process.version}; Redis ${result.machine.redis}${server ? ' (private, no persistence)' : ''}`,
      `Records: ${result.data.avg_record_json_bytes} B JSON each (payload ${result.data.avg_payload_bytes} B), ${result.data.window_days.toFixed(2)} days, TTL 30 days; largest tenant ${(result.data.largest_tenant_share * 100).toFixed(1)} % of traffic`,
      '',
      '| Load | Value |',
      '|---|---|',
      `| records/s (append + rollup, ${CONCURRENCY} in flight) | ${result.load.records_per_second.toLocaleString('en-US')} |`,
      `| load time | ${result.load.seconds} s |`,
      `| per-record write latency p50 / p99 | ${result.load.record_write_latency.p50_ms} / ${result.load.record_write_latency.p99_ms} ms |`,
      `| CPU: node / redis-server | ${result.load.node_cpu_cores} / ${result.load.redis_cpu_cores} cores |`,
      `| node event-loop utilization | ${result.load.node_event_loop_utilization} |`,
      ...(result.load.machine_busy_cores === null
        ? []
        : [`| whole machine busy (all processes) | ${result.load.machine_busy_cores} of ${cpus.length} cores |`]),
      '',
      '| Memory | Bytes per record |',
      '|---|---|',
      `| total (used_memory ${mib(memoryBefore)} → ${mib(memoryAfter)}) | ${result.memory.bytes_per_record} |`,
      ...Object.entries(result.memory.by_category_bytes_per_record).map(([k, v]) => `| ${k} | ${v} |`),
      '',
      '| Key kind | Keys | Index entries | Bytes/key | Bytes/record |',
      '|---|---|---|---|---|',
      ...kinds.map(
        (k) =>
          `| ${k.kind} (${k.category}) | ${k.keys.toLocaleString('en-US')} | ${k.entries === null ? '' : `${k.entries.toLocaleString('en-US')} (${Math.round(k.estimated_bytes / Math.max(1, k.entries))} B each)`} | ${k.bytes_per_key} | ${k.bytes_per_record} |`,
      ),
      '',
      '| Query | p50 ms | p95 ms | p99 ms | mean ms | rows (records or buckets) | Redis commands / ms |',
      '|---|---|---|---|---|---|---|',
      ...Object.values(queries).map(
        (q) =>
          `| ${q.description} | ${q.p50_ms} | ${q.p95_ms} | ${q.p99_ms} | ${q.mean_ms} | ${q.avg_records} | ${q.redis_commands === undefined ? '' : `${q.redis_commands} / ${q.redis_ms}`} |`,
      ),
    ];
    console.log(lines.join('\n'));
    mkdirSync(dirname(RESULTS_FILE), { recursive: true });
    writeFileSync(RESULTS_FILE, `${JSON.stringify(result, null, 2)}\n`);
    console.error(`audit-scale: results written to ${RESULTS_FILE}`);
  } finally {
    if (server === null && process.env['AUDIT_KEEP'] !== '1') await deletePrefix(client, prefix);
    await state.close();
    await server?.stop();
  }
}

await main();
