import type { AuditRecord } from '@sluice/core';
import type { BodyCodec, EncodedBodies } from './body-codec.js';

/**
 * How a record maps onto audit_records: the filter columns, and the rest of the record (payload,
 * details, metadata, hash-chain links...) as its body: deflated JSON in `body_z` (body-codec.ts),
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

/** The statement inserting a batch: one array parameter per column, the dictionary last; a row already there is skipped. */
export function insertStatement(table: string): string {
  const arrays = COLUMN_FIELDS.map((field, i) => `$${i + 1}::${COLUMN_TYPES[field]}[]`);
  arrays.push(`$${COLUMN_FIELDS.length + 1}::bytea[]`);
  return `INSERT INTO ${table} (${COLUMN_FIELDS.join(', ')}, body_z, body_dict) SELECT *, $${COLUMN_FIELDS.length + 2}::integer FROM unnest(${arrays.join(', ')}) ON CONFLICT (dispatched_at, id) DO NOTHING`;
}

/** The parameters of insertStatement for records and their encoded bodies. */
export function insertParameters(records: readonly AuditRecord[], encoded: EncodedBodies): unknown[] {
  const columns = COLUMN_FIELDS.map((field) => records.map((r) => r[field] ?? null));
  return [...columns, encoded.bodies, encoded.dictionary];
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
