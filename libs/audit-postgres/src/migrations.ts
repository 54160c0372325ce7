import { keyStatistics } from './partitions.js';

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
  {
    version: 3,
    name: 'compressed bodies, narrow indexes',
    // A row of version 2 was ~1,020 bytes (the body as jsonb, as large as its JSON) and its
    // indexes ~330: text keys, and pages left half full by inserts in the middle of each tenant's
    // range. From here the body is deflated against a dictionary of recent bodies
    // (audit_dictionaries; body_dict names it, NULL: none) into body_z, and `body` stays only on
    // the rows written before. Scope, tenant and action id are indexed by their 64-bit hash:
    // 8-byte keys beside the time, which PostgreSQL packs full when a tenant's rows arrive
    // together (the ingest inserts each batch in scope and time order). The scope's and the
    // tenant's are stored columns, so that a count reads their index alone (an expression index
    // cannot answer without the row); pages match the text columns too, so a hash shared by two
    // values returns nothing extra. Adding the stored columns rewrites the rows already there.
    sql: (s) => `
      CREATE TABLE ${s}.audit_dictionaries (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        created_at timestamptz NOT NULL,
        sample_records integer NOT NULL,
        dictionary bytea NOT NULL
      );
      ALTER TABLE ${s}.audit_records
        ALTER COLUMN body DROP NOT NULL,
        ADD COLUMN body_z bytea,
        ADD COLUMN body_dict integer,
        ADD COLUMN scope_key bigint GENERATED ALWAYS AS (hashtextextended(namespace || '/' || tenant, 0)) STORED,
        ADD COLUMN tenant_key bigint GENERATED ALWAYS AS (hashtextextended(tenant, 0)) STORED,
        ADD CONSTRAINT audit_records_has_body CHECK (body IS NOT NULL OR body_z IS NOT NULL);
      DROP INDEX ${s}.audit_records_scope_time;
      DROP INDEX ${s}.audit_records_tenant_time;
      DROP INDEX ${s}.audit_records_action;
      CREATE INDEX audit_records_scope_key ON ${s}.audit_records (scope_key, dispatched_at);
      CREATE INDEX audit_records_tenant_key ON ${s}.audit_records (tenant_key, dispatched_at);
      CREATE INDEX audit_records_action_key ON ${s}.audit_records ((hashtextextended(action_id, 0)));
      DO $$
      DECLARE p text;
      BEGIN
        FOR p IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '${s}.audit_records'::regclass LOOP
          EXECUTE format('${keyStatistics(s, '%1$s').replaceAll("'", "''")}', p);
        END LOOP;
      END $$;
    `,
  },
  {
    version: 4,
    name: 'analytics and coverage rollups',
    // The analytics and coverage counters, kept by the ingest in the statement that inserts the
    // records (pg-rollups.ts): only rows new to audit_records are counted, so a batch delivered
    // again counts nothing, and the state store (Redis) does no rollup work for this trail.
    // Analytics: per hour and per UTC day ('h', 'd'), per tuple and latency bin, the actions and
    // the sum of their durations (µs). Coverage: per UTC day and tuple, the actions ('' stands
    // for no matched rule: a rule name is never empty). The keys lead with what queries fix, and
    // compare bytewise ("C"), not by the database's locale. Pages are left a fifth free, so that
    // adding to a counter rewrites its row in place (a HOT update: no new index entry).
    sql: (s) => `
      CREATE TABLE ${s}.audit_rollups (
        granularity "char" NOT NULL,
        bucket timestamptz NOT NULL,
        namespace text COLLATE "C" NOT NULL,
        tenant text COLLATE "C" NOT NULL,
        provider text COLLATE "C" NOT NULL,
        action_type text COLLATE "C" NOT NULL,
        outcome text COLLATE "C" NOT NULL,
        bin smallint NOT NULL,
        actions bigint NOT NULL,
        micros bigint NOT NULL,
        PRIMARY KEY (granularity, bucket, tenant, namespace, provider, action_type, outcome, bin)
      ) WITH (fillfactor = 80);
      CREATE TABLE ${s}.audit_coverage (
        day timestamptz NOT NULL,
        namespace text COLLATE "C" NOT NULL,
        tenant text COLLATE "C" NOT NULL,
        provider text COLLATE "C" NOT NULL,
        action_type text COLLATE "C" NOT NULL,
        matched_rule text COLLATE "C" NOT NULL,
        actions bigint NOT NULL,
        PRIMARY KEY (day, tenant, namespace, provider, action_type, matched_rule)
      ) WITH (fillfactor = 80);
    `,
  },
];
