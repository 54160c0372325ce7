import pg from 'pg';
import { startPostgresServer, type RunningPostgres } from './postgres-server.js';
import type { Backend } from './start-gateway.js';

/** Where the HTTP suites keep the audit trail: in the state backend, or in PostgreSQL fed through it. */
export interface AuditTrailSetup {
  state: Backend;
  postgres: boolean;
}

export const AUDIT_TRAILS: readonly (AuditTrailSetup & { name: string })[] = [
  { name: 'memory', state: 'memory', postgres: false },
  { name: 'redis', state: 'redis', postgres: false },
  { name: 'redis cluster', state: 'redis-cluster', postgres: false },
  { name: 'postgresql through memory', state: 'memory', postgres: true },
  { name: 'postgresql through redis', state: 'redis', postgres: true },
];

export interface AuditTrailConfig {
  audit: Record<string, unknown>;
  /** PostgreSQL only: rows of the table for one tenant, and their distinct action ids (what reached the database); null on the state trail. */
  rowsOf: ((tenant: string) => Promise<{ rows: number; actionIds: number }>) | null;
  stop(): Promise<void>;
}

/** The audit config of a setup (with its own PostgreSQL server and database when it needs one), and how to stop what it started. */
export async function auditTrailConfig(setup: AuditTrailSetup): Promise<AuditTrailConfig> {
  return setup.postgres ? postgresTrailConfig() : { audit: {}, rowsOf: null, stop: async () => {} };
}

export interface PostgresTrailConfig extends AuditTrailConfig {
  rowsOf: NonNullable<AuditTrailConfig['rowsOf']>;
  /** The server itself, for tests that take it down. */
  server: RunningPostgres;
}

/** A private PostgreSQL server and database, and the audit config that keeps the trail there. */
export async function postgresTrailConfig(): Promise<PostgresTrailConfig> {
  const server = await startPostgresServer();
  const url = await server.createDatabase('trail');
  const rowsOf = async (tenant: string) => {
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query<{ rows: number; ids: number }>(
        'SELECT count(*)::int AS rows, count(DISTINCT action_id)::int AS ids FROM sluice_audit.audit_records WHERE tenant = $1',
        [tenant],
      );
      return { rows: rows[0]?.rows ?? 0, actionIds: rows[0]?.ids ?? 0 };
    } finally {
      await db.end();
    }
  };
  return { audit: { backend: 'postgres', postgres: { url } }, rowsOf, server, stop: () => server.stop() };
}
