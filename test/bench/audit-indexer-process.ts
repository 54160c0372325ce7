/**
 * One indexer of audit-postgres-scale.ts in a process of its own, as a worker runs it: started
 * with the Redis and PostgreSQL URLs and the schema, it moves records while the parent says run
 * ({ run: true }) and, told to stop ({ run: false }), closes its store and answers with the CPU
 * it used meanwhile ({ cpuMs }). It exits when the parent disconnects.
 *   fork('audit-indexer-process.ts', [redisUrl, postgresUrl, schema])
 */
import { PgAuditStore } from '@sluice/audit-postgres';
import { RedisStateStore } from '@sluice/state';
import pg from 'pg';

const [redisUrl, postgresUrl, schema] = process.argv.slice(2) as [string, string, string];
const state = await RedisStateStore.connect({ url: redisUrl, prefix: 'sluice' });
const pool = new pg.Pool({ connectionString: postgresUrl, max: 4 });
let running: { store: PgAuditStore; cpu: NodeJS.CpuUsage } | null = null;

process.on('message', (message: { run: boolean }) => {
  void (async () => {
    if (message.run && running === null) {
      running = { store: new PgAuditStore(state, { pool, schema }), cpu: process.cpuUsage() };
      running.store.startIndexer();
    } else if (!message.run && running !== null) {
      const { store, cpu } = running;
      running = null;
      await store.close();
      const used = process.cpuUsage(cpu);
      process.send?.({ cpuMs: (used.user + used.system) / 1000 });
    }
  })();
});
process.on('disconnect', () => {
  void Promise.all([running?.store.close(), state.close(), pool.end()]).finally(() => process.exit(0));
});
process.send?.({ ready: true });
