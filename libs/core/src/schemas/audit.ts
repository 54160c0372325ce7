import { z } from 'zod';

/**
 * One audit record: what was dispatched, what happened, who asked. Written for every dispatch
 * outcome except dry runs. Field names follow the reference implementation's record.
 */
export const AuditRecord = z.object({
  id: z.string().describe('record id'),
  action_id: z.string(),
  chain_id: z.string().nullable(),
  trace_id: z
    .string()
    .nullable()
    .default(null)
    .describe("the W3C trace id of the dispatch: the server trace with tracing on, else the caller's traceparent; null without either"),
  namespace: z.string(),
  tenant: z.string(),
  provider: z.string().describe('the provider the action asked for'),
  action_type: z.string(),
  verdict: z.string().describe('rule verdict tag: allow, suppress, deduplicate, throttle, reroute, modify, ...'),
  matched_rule: z.string().nullable(),
  outcome: z.string().describe('executed, suppressed, deduplicated, throttled, rerouted, failed, ...'),
  action_payload: z.record(z.string(), z.unknown()).nullable().describe('null when audit.store_payload is off; redacted fields replaced'),
  verdict_details: z.record(z.string(), z.unknown()),
  outcome_details: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
  dispatched_at: z.string().describe('RFC 3339'),
  completed_at: z.string().describe('RFC 3339'),
  duration_ms: z.number(),
  expires_at: z.string().nullable().describe('RFC 3339; null: kept until deleted'),
  caller_id: z.string(),
  auth_method: z.string(),
  silence_comment: z.string().optional(),
  sequence_number: z.number().int().nullable().describe('position in the (namespace, tenant) hash chain; null when chaining is off'),
  previous_hash: z.string().nullable(),
  record_hash: z.string().nullable(),
});
export type AuditRecord = z.infer<typeof AuditRecord>;

/**
 * The fields the writer fills in. The store assigns `id` (a time-sortable UUIDv7, so ties in
 * dispatched_at order by append; a draft id is ignored), sets `expires_at` to dispatched_at plus
 * the TTL it is given, and adds the hash-chain fields.
 */
export type NewAuditRecord = Omit<AuditRecord, 'id' | 'sequence_number' | 'previous_hash' | 'record_hash'> & { id?: string };

/** Filters of GET /v1/audit (exact matches), plus the time window and paging. */
export const AuditFilterFields = [
  'namespace',
  'tenant',
  'provider',
  'action_type',
  'outcome',
  'verdict',
  'matched_rule',
  'caller_id',
  'chain_id',
  'trace_id',
] as const;
export type AuditFilterField = (typeof AuditFilterFields)[number];

/** The largest audit page (and bulk replay): a larger `limit` is refused, not clamped. */
const AUDIT_PAGE_MAX = 1000;

export const AuditQuery = z.object({
  namespace: z.string().optional(),
  tenant: z.string().optional(),
  provider: z.string().optional(),
  action_type: z.string().optional(),
  outcome: z.string().optional(),
  verdict: z.string().optional(),
  matched_rule: z.string().optional(),
  caller_id: z.string().optional(),
  chain_id: z.string().optional(),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/, 'a W3C trace id: 32 lowercase hex digits')
    .optional()
    .describe('the W3C trace id (32 lowercase hex digits) of the dispatch'),
  from: z.iso.datetime({ offset: true }).optional().describe('dispatched at or after (RFC 3339)'),
  to: z.iso.datetime({ offset: true }).optional().describe('dispatched at or before (RFC 3339)'),
  limit: z.number().int().min(1).max(AUDIT_PAGE_MAX).default(50).describe('page size, 1..1000; out of range is a 400'),
  offset: z.number().int().min(0).default(0),
  cursor: z.string().max(1024).optional().describe('next_cursor of the previous page (then offset is ignored)'),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

export const AuditPage = z.object({
  records: z.array(AuditRecord),
  total: z.number().int().optional().describe('records matching the filters; omitted when it cannot be counted cheaply or a cursor was used'),
  limit: z.number().int(),
  offset: z.number().int(),
  next_cursor: z.string().optional().describe('pass as cursor to read the next (older) page; absent on the last page'),
});
export type AuditPage = z.infer<typeof AuditPage>;

export const AuditVerifyInput = z.object({
  namespace: z.string().min(1),
  tenant: z.string().min(1),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
});
export type AuditVerifyInput = z.infer<typeof AuditVerifyInput>;

export const AuditVerifyResult = z.object({
  valid: z.boolean(),
  records_checked: z.number().int(),
  first_broken_at: z.number().int().optional().describe('sequence number of the first record whose link or hash does not check'),
  first_record_id: z.string().optional(),
  last_record_id: z.string().optional(),
});
export type AuditVerifyResult = z.infer<typeof AuditVerifyResult>;
