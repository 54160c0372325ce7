import { binOf } from '@sluice/audit';
import type { AuditRecord } from '@sluice/core';
import type { BodyCodec, EncodedBodies } from './body-codec.js';
import { cutoffs, rollupCtes, type RollupRetention } from './pg-rollups.js';

/**
 * How a record maps onto audit_records: the filter columns, and the rest of the record (payload,
 * details, metadata, hash-chain links...) as its body: compressed JSON in `body_z` (body-codec.ts),
 * or `jsonb` in `body` on rows written before schema version 3. Reading puts the record back
 * together field for field, so what PostgreSQL returns is what was stored.
 */

/** The PostgreSQL type of each column a record's field fills. */
const COLUMN_TYPES = {
  id: 'uuid',
  dispatched_at: 'timestamptz',
  action_id: 'text',
  namespace: 'text',
  tenant: 'text',
  provider: 'text',
  action_type: 'text',
  verdict: 'text',
  outcome: 'text',
  matched_rule: 'text',
  caller_id: 'text',
  chain_id: 'text',
  trace_id: 'text',
  expires_at: 'timestamptz',
  sequence_number: 'bigint',
} as const satisfies Partial<Record<keyof AuditRecord, string>>;

/** The record fields that are columns of their own; every other field is the body. */
type ColumnField = keyof typeof COLUMN_TYPES;
const COLUMN_FIELDS = Object.keys(COLUMN_TYPES) as ColumnField[];
const IS_COLUMN: ReadonlySet<string> = new Set(COLUMN_FIELDS);

/** Fields kept in the body. */
type BodyFields = Omit<AuditRecord, ColumnField>;

/**
 * The hashed keys (schema version 3), written in queries as the indexes have them so that the
 * planner uses them. `scope_key` and `tenant_key` are stored columns: a count matching them
 * alone reads their index only.
 */
export const hashedKey = {
  scope: (namespace: string, tenant: string) => `scope_key = hashtextextended(${namespace}::text || '/' || ${tenant}::text, 0)`,
  tenant: (tenant: string) => `tenant_key = hashtextextended(${tenant}::text, 0)`,
  action: (actionId: string) => `hashtextextended(action_id, 0) = hashtextextended(${actionId}::text, 0)`,
};

/**
 * The statement inserting a batch: one array parameter per column; the bodies as one binary
 * parameter with each one's offset and length (no hex text to build and parse per body); the
 * dictionary. A row already there is skipped. With rollup tables, also each record's latency
 * bin and duration (µs), and the rollups' cutoffs: the rows it inserts are added to the rollups
 * in the same statement (pg-rollups.ts), so a batch delivered again counts nothing twice. Its
 * one row says how many records were new.
 */
export function insertStatement(table: string, rollups?: { analytics: string; coverage: string }): string {
  const n = COLUMN_FIELDS.length;
  const columns = COLUMN_FIELDS.join(', ');
  const arrays = COLUMN_FIELDS.map((field, i) => `$${i + 1}::${COLUMN_TYPES[field]}[]`);
  arrays.push(`$${n + 1}::integer[]`, `$${n + 2}::integer[]`);
  const names = [columns, 'body_at', 'body_bytes'];
  if (rollups !== undefined) {
    arrays.push(`$${n + 5}::smallint[]`, `$${n + 6}::bigint[]`);
    names.push('bin', 'micros');
  }
  const insert = `INSERT INTO ${table} (${columns}, body_z, body_dict)
      SELECT ${columns}, substring($${n + 4}::bytea FROM body_at FOR body_bytes), $${n + 3}::integer FROM input
      ON CONFLICT (dispatched_at, id) DO NOTHING RETURNING id`;
  const ctes = [`input AS (SELECT * FROM unnest(${arrays.join(', ')}) AS u(${names.join(', ')}))`, `stored AS (${insert})`];
  if (rollups !== undefined) ctes.push('fresh AS (SELECT input.* FROM input JOIN stored USING (id))', rollupCtes(rollups, { h: n + 7, d: n + 8 }));
  return `WITH ${ctes.join(',\n    ')}\n    SELECT count(*)::int AS stored FROM stored`;
}

/** The parameters of insertStatement for records and their encoded bodies; with rollups, their bins, durations and the cutoffs at `nowMs`. */
export function insertParameters(records: readonly AuditRecord[], encoded: EncodedBodies, rollups?: { retention: RollupRetention; nowMs: number }): unknown[] {
  const params: unknown[] = COLUMN_FIELDS.map((field) => records.map((r) => r[field] ?? null));
  const offsets: number[] = [];
  let at = 1; // substring() counts from 1
  for (const body of encoded.bodies) {
    offsets.push(at);
    at += body.length;
  }
  params.push(
    offsets,
    encoded.bodies.map((b) => b.length),
    encoded.dictionary,
    Buffer.concat(encoded.bodies),
  );
  if (rollups !== undefined) {
    params.push(
      records.map((r) => binOf(r.duration_ms)),
      records.map((r) => Math.max(0, Math.round(r.duration_ms * 1000))),
      ...cutoffs(rollups.retention, rollups.nowMs),
    );
  }
  return params;
}

/** The JSON of a record's body: every field that is not a column of its own. */
export function bodyJson(record: AuditRecord): string {
  const body: Record<string, unknown> = {};
  for (const field in record) if (!IS_COLUMN.has(field)) body[field] = record[field as keyof AuditRecord];
  return JSON.stringify(body);
}

/** A row as read by SELECT_LIST. */
export interface RecordRow {
  id: string;
  dispatched_at: string;
  action_id: string;
  namespace: string;
  tenant: string;
  provider: string;
  action_type: string;
  verdict: string;
  outcome: string;
  matched_rule: string | null;
  caller_id: string;
  chain_id: string | null;
  trace_id: string | null;
  expires_at: string | null;
  sequence_number: string | null;
  /** Rows written before schema version 3. */
  body: BodyFields | null;
  body_z: Buffer | null;
  body_dict: number | null;
}

/** The select list: timestamps back as the same RFC 3339 UTC text the record carried (millisecond precision). */
export const SELECT_LIST = [...COLUMN_FIELDS, 'body', 'body_z', 'body_dict']
  .map((c) => (c === 'dispatched_at' || c === 'expires_at' ? `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${c}` : c))
  .join(', ');

/** The records of rows, their compressed bodies decoded together (one lookup of missing dictionaries). */
export async function recordsOf(rows: readonly RecordRow[], codec: BodyCodec): Promise<AuditRecord[]> {
  const compressed = rows.filter((row) => row.body_z !== null).map((row) => ({ body: row.body_z as Buffer, dictionary: row.body_dict }));
  const decoded = compressed.length === 0 ? [] : await codec.decode(compressed);
  let next = 0;
  return rows.map((row) => {
    const { body, body_z, body_dict, sequence_number, ...columns } = row;
    const fields: BodyFields = body_z === null ? (body as BodyFields) : JSON.parse(decoded[next++] as string);
    return { ...columns, ...fields, sequence_number: sequence_number === null ? null : Number(sequence_number) } as AuditRecord;
  });
}
