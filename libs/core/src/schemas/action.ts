import { z } from 'zod';
import { boundedName } from './names.js';

/** A scope or routing name: non-empty, bounded, and free of control characters. */
const Name = boundedName();

export const Labels = z.record(z.string(), z.string()).describe('string labels read by rules, silences and groups');

/**
 * The action fields the audit trail keeps in its record's metadata, as `__<field>`; a replay reads
 * them back as the action's fields. A caller's own metadata key of such a name would become one,
 * unchecked, so they are reserved.
 */
export const CARRIED_ACTION_FIELDS = ['dedup_key', 'status', 'fingerprint', 'starts_at', 'ends_at'] as const;

const reserved = z.never().optional().describe('reserved: the audit record keeps the action field of that name here');

/** `metadata.labels` is an object of strings; callers may add keys of their own, except the reserved ones. */
export const ActionMetadata = z
  .object({ labels: Labels.optional(), ...Object.fromEntries(CARRIED_ACTION_FIELDS.map((f) => [`__${f}`, reserved])) })
  .catchall(z.unknown())
  .describe('free key/value object; labels is an object of strings; __dedup_key, __status, __fingerprint, __starts_at and __ends_at are reserved');

const Timestamp = z.iso.datetime({ offset: true });

/** The dispatch request body (spec "Action"). `id` and `created_at` are generated when absent. */
export const ActionInput = z
  .object({
    id: boundedName().optional().describe('action id; a UUID is generated when absent'),
    namespace: Name.describe('logical namespace'),
    tenant: Name.describe('tenant identifier; dotted names form a hierarchy'),
    provider: Name.describe('target provider name'),
    action_type: Name.describe('action discriminator'),
    payload: z.record(z.string(), z.unknown()).describe('arbitrary JSON object'),
    dedup_key: z.string().min(1).max(1024).optional(),
    metadata: ActionMetadata.optional(),
    status: z.string().max(256).optional().describe('current event state'),
    fingerprint: z.string().max(1024).optional().describe('event correlation id'),
    starts_at: Timestamp.optional(),
    ends_at: Timestamp.optional(),
    created_at: Timestamp.optional(),
  })
  .describe('Action');

export type ActionInput = z.infer<typeof ActionInput>;

/** A name as an earlier release checked it (before C1 and bidirectional controls, `.` and `..` were refused). */
const StoredName = z.string().min(1).max(256);

/**
 * An action as stored in an approval or a dead letter, read back: its names are taken as the
 * release that stored them checked them. A later release refusing more must still read, decide,
 * retry and expire what an earlier one (or one still running beside it) stored, not lose it.
 */
export const StoredActionInput = ActionInput.extend({
  id: StoredName.optional(),
  namespace: StoredName,
  tenant: StoredName,
  provider: StoredName,
  action_type: StoredName,
});

/** An action as the pipeline sees it: id and created_at always present, metadata always an object. */
export interface Action extends Omit<ActionInput, 'id' | 'created_at' | 'metadata'> {
  id: string;
  created_at: string;
  metadata: z.infer<typeof ActionMetadata>;
}

export const BatchInput = z.object({ actions: z.array(ActionInput).min(1).max(1000) }).describe('a batch of at most 1000 actions');

export type BatchInput = z.infer<typeof BatchInput>;

export const DispatchQuery = z.object({
  dry_run: z.boolean().default(false).describe('evaluate without executing or touching state'),
});
