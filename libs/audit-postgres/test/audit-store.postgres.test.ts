import type { AuditRecord } from '@sluice/core';
import { MemoryStateStore, type RedisStateStore, type StateStore } from '@sluice/state';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { deleteKeys } from '../../../test/support/delete-keys.js';
import { startPostgresServer, type RunningPostgres } from '../../../test/support/postgres-server.js';
import { REDIS_TOPOLOGIES, connectRedisStore } from '../../../test/support/redis-topologies.js';
import { uniquePrefix } from '../../../test/support/redis-url.js';
import { auditStoreContract, type AuditHarness, type TestedStore, type TrailUnderTest } from '../../audit/test/audit-store.contract.js';
import { migrate, PgAuditRecords, PgAuditStore } from '../src/index.js';

/*
 * The audit store contract on the PostgreSQL trail, with each state backend as its way in: the
 * memory queue (one process) and the Redis ingest log (a cluster), on one Redis or a Redis Cluster.
 */

let server: RunningPostgres;
let pool: pg.Pool;
beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: await server.createDatabase('contract'), max: 6 });
  for (const schema of ['via_memory', 'via_redis', 'via_redis_cluster']) await migrate(pool, schema);
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

/** The PostgreSQL trail of one schema; `closeAll` closes every store it opened (their queues flush first). */
function pgTrail(schema: string): TrailUnderTest & { closeAll(): Promise<void> } {
  const opened: TestedStore[] = [];
  const table = `${schema}.audit_records`;
  // Tampering reaches the table: what is still on its way there is moved first.
  const remove = async (record: AuditRecord) => {
    for (const store of opened) await store.catchUp();
    await pool.query(`DELETE FROM ${table} WHERE id = $1`, [record.id]);
  };
  return {
    kind: 'table',
    open(state, opts) {
      const store = new PgAuditStore(state, { pool, schema, ...opts });
      opened.push(store);
      return store;
    },
    async rewrite(record, change) {
      for (const store of opened) await store.catchUp();
      const [stored] = (await new PgAuditRecords(pool, schema).byActionId(record.action_id, 1000)).filter((r) => r.id === record.id);
      if (stored === undefined) throw new Error(`record ${record.id} is not in the table`);
      await remove(record);
      await new PgAuditRecords(pool, schema).insert([{ ...stored, ...change }]);
    },
    async remove(record) {
      await remove(record);
    },
    async closeAll() {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    },
  };
}

function harness(schema: string, state: StateStore, extra: Pick<AuditHarness, 'connectAnother'> & { cleanupState(): Promise<void> }): AuditHarness {
  const trail = pgTrail(schema);
  return {
    state,
    trail,
    connectAnother: extra.connectAnother,
    cleanup: async () => {
      await trail.closeAll();
      await pool.query(`TRUNCATE ${schema}.audit_records`);
      await extra.cleanupState();
    },
  };
}

auditStoreContract(
  'postgresql, through the memory queue',
  async () => {
    const state = new MemoryStateStore();
    return harness('via_memory', state, { connectAnother: async () => state, cleanupState: () => state.close() });
  },
  'table',
);

for (const topology of REDIS_TOPOLOGIES) {
  auditStoreContract(
    `postgresql, through the ${topology} ingest log`,
    async () => {
      const prefix = uniquePrefix();
      const connect = () => connectRedisStore(topology, prefix);
      const state = await connect();
      const others: RedisStateStore[] = [];
      return harness(topology === 'redis' ? 'via_redis' : 'via_redis_cluster', state, {
        connectAnother: async () => {
          const other = await connect();
          others.push(other);
          return other;
        },
        cleanupState: async () => {
          await deleteKeys(state.client, `${prefix}:*`);
          await Promise.all([state, ...others].map((s) => s.close()));
        },
      });
    },
    'table',
  );
}
