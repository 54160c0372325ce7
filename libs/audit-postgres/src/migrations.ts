/**
 * The schema of the PostgreSQL audit trail, as numbered steps. A step is never edited once it
 * has shipped: a change is a new step. `migrate` applies the missing ones in order, each in its
 * own transaction with its row in schema_migrations.
 */
export interface Migration {
  version: number;
  name: string;
  /** The step's SQL, given the quoted schema name. */
  sql(schema: string): string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'audit records, partitioned by day',
    // One row per record. Every filter of GET /v1/audit is a column; the rest of the record
    // (payload, details, metadata, hash-chain links...) is `body`. Partitioned by range of
    // dispatched_at, one partition per UTC day (partitions.ts creates them ahead), so the
    // gateway-wide TTL drops whole partitions. The primary key must hold the partition key.
    sql: (s) => `
      CREATE TABLE ${s}.audit_records (
        id uuid NOT NULL,
        dispatched_at timestamptz NOT NULL,
        action_id text NOT NULL,
        namespace text NOT NULL,
        tenant text NOT NULL,
        provider text NOT NULL,
        action_type text NOT NULL,
        verdict text NOT NULL,
        outcome text NOT NULL,
        matched_rule text,
        caller_id text NOT NULL,
        chain_id text,
        trace_id text,
        expires_at timestamptz,
        sequence_number bigint,
        body jsonb NOT NULL,
        PRIMARY KEY (dispatched_at, id)
      ) PARTITION BY RANGE (dispatched_at);
      -- A tenant's records newest first, and the cursor (dispatched_at, id) within them.
      CREATE INDEX audit_records_scope_time ON ${s}.audit_records (namespace, tenant, dispatched_at DESC, id DESC);
      -- Tenant filters without a namespace.
      CREATE INDEX audit_records_tenant_time ON ${s}.audit_records (tenant, dispatched_at DESC);
      -- GET /v1/audit/{action_id}.
      CREATE INDEX audit_records_action ON ${s}.audit_records (action_id);
      -- Sparse identifiers: only the rows that have one.
      CREATE INDEX audit_records_trace ON ${s}.audit_records (trace_id) WHERE trace_id IS NOT NULL;
      CREATE INDEX audit_records_chain ON ${s}.audit_records (chain_id) WHERE chain_id IS NOT NULL;
      -- Hash-chain verification walks a tenant's chain in sequence order.
      CREATE INDEX audit_records_sequence ON ${s}.audit_records (namespace, tenant, sequence_number) WHERE sequence_number IS NOT NULL;
      -- Cross-tenant scans of a time window: a few pages of BRIN summary per partition.
      CREATE INDEX audit_records_time_brin ON ${s}.audit_records USING brin (dispatched_at);
    `,
  },
  {
    version: 2,
    name: 'expiry index',
    // Retention: due rows (expires_at at or before now) are deleted in batches, and a partition
    // is dropped whole once it holds no live row (a later expires_at, or NULL: kept for good) —
    // both answered from this index, NULLs included.
    sql: (s) => `CREATE INDEX audit_records_expiry ON ${s}.audit_records (expires_at);`,
  },
];
