import type { AuditRecord } from '@sluice/core';

/**
 * How a record maps onto audit_records: the filter columns, and `body` for the rest. Reading
 * puts the record back together field for field, so what PostgreSQL returns is what was stored.
 */
export const COLUMNS = [
  'id',
  'dispatched_at',
  'action_id',
  'namespace',
  'tenant',
  'provider',
  'action_type',
  'verdict',
  'outcome',
  'matched_rule',
  'caller_id',
  'chain_id',
  'trace_id',
  'expires_at',
  'sequence_number',
  'body',
] as const;

/** The PostgreSQL type of each column but `body`: what a record's JSON field is cast to. */
const COLUMN_TYPES: Record<Exclude<(typeof COLUMNS)[number], 'body'>, string> = {
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
};

/** The record fields that are columns of their own; every other field goes into `body`. */
type ColumnField = keyof typeof COLUMN_TYPES;
const COLUMN_FIELDS = Object.keys(COLUMN_TYPES) as ColumnField[];

/** Fields kept in `body`. */
type BodyFields = Omit<AuditRecord, ColumnField>;

/**
 * The values of COLUMNS, in order, taken from a record's JSON `r` (jsonb) by PostgreSQL itself:
 * each column field cast to its type, and `body` the rest of the record. The ingest hands over
 * the JSON the state store kept, so nothing is parsed or re-encoded on the way.
 */
export function columnsFromJson(r: string): string {
  const fields = COLUMN_FIELDS.map((field) => `(${r}->>'${field}')::${COLUMN_TYPES[field]}`);
  return [...fields, `${r} - ARRAY[${COLUMN_FIELDS.map((f) => `'${f}'`).join(', ')}]::text[]`].join(', ');
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
  body: BodyFields;
}

/** The select list: timestamps back as the same RFC 3339 UTC text the record carried (millisecond precision). */
export const SELECT_LIST = COLUMNS.map((c) =>
  c === 'dispatched_at' || c === 'expires_at' ? `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${c}` : c,
).join(', ');

export function recordOf(row: RecordRow): AuditRecord {
  const { body, sequence_number, ...columns } = row;
  return { ...columns, ...body, sequence_number: sequence_number === null ? null : Number(sequence_number) } as AuditRecord;
}
