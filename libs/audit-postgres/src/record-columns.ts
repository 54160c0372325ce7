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

/** The PostgreSQL type of each column, for the arrays an unnest() insert takes. */
export const COLUMN_TYPES: Record<(typeof COLUMNS)[number], string> = {
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
  body: 'jsonb',
};

/** The record fields that are columns of their own; every other field goes into `body`. */
type ColumnField = Exclude<(typeof COLUMNS)[number], 'body'>;
const COLUMN_FIELDS = COLUMNS.filter((c): c is ColumnField => c !== 'body');
const IN_COLUMNS = new Set<string>(COLUMN_FIELDS);

/** Fields kept in `body`. */
type BodyFields = Omit<AuditRecord, ColumnField>;

/** One record as the values of COLUMNS, in order. Timestamps stay RFC 3339 text (PostgreSQL parses them). */
export function rowOf(record: AuditRecord): unknown[] {
  const row: unknown[] = COLUMN_FIELDS.map((field) => record[field]);
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record)) if (!IN_COLUMNS.has(field)) body[field] = value;
  row.push(JSON.stringify(body));
  return row;
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
