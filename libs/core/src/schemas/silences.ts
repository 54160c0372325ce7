import { z } from 'zod';
import { pageQuery } from './paging.js';
import { MAX_SILENCE_SECONDS, durationMinutes, durationSeconds } from './bounds.js';
import { boundedName } from './names.js';

/** Alertmanager's four matcher kinds (displayed `=`, `!=`, `=~`, `!~`). */
const SilenceMatcherOp = z.enum(['equal', 'not_equal', 'regex', 'not_regex']);

export const SilenceMatcher = z.strictObject({
  name: boundedName().describe('label name, read from metadata.labels'),
  op: SilenceMatcherOp.default('equal'),
  value: z.string().max(4096).describe('exact value, or for regex ops an anchored RE2 pattern of at most 256 characters'),
});
export type SilenceMatcher = z.infer<typeof SilenceMatcher>;

const Comment = z.string().trim().min(1, 'a comment is required').max(4096);
const Instant = z.iso.datetime({ offset: true }).describe('RFC 3339');

/** POST /v1/silences. `ends_at` wins over `duration_seconds`; one of them is required. */
export const SilenceCreateInput = z.strictObject({
  namespace: boundedName(),
  tenant: boundedName().describe('covers this tenant and its children (acme covers acme.eu)'),
  matchers: z.array(SilenceMatcher).min(1, 'at least one matcher is required').max(64),
  comment: Comment,
  starts_at: Instant.optional().describe('default: now'),
  ends_at: Instant.optional(),
  duration_seconds: durationSeconds(MAX_SILENCE_SECONDS).optional().describe('ends_at = starts_at + duration'),
});
export type SilenceCreateInput = z.infer<typeof SilenceCreateInput>;

/** PUT /v1/silences/{id}: only `ends_at` and `comment` change; matchers are immutable. */
export const SilenceUpdateInput = z.strictObject({
  ends_at: Instant.optional(),
  comment: Comment.optional(),
});
export type SilenceUpdateInput = z.infer<typeof SilenceUpdateInput>;

/** POST /v1/silences/{id}/extend: minutes added to the current `ends_at`. */
export const SilenceExtendInput = z.strictObject({
  minutes: durationMinutes(MAX_SILENCE_SECONDS / 60),
});
export type SilenceExtendInput = z.infer<typeof SilenceExtendInput>;

export const Silence = z.object({
  id: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  matchers: z.array(SilenceMatcher),
  starts_at: z.string(),
  ends_at: z.string(),
  created_by: z.string(),
  comment: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  active: z.boolean().describe('starts_at <= now < ends_at'),
});
export type Silence = z.infer<typeof Silence>;

export const SilenceListQuery = z.object({
  namespace: z.string().optional(),
  tenant: z.string().optional().describe('exact tenant'),
  include_expired: z.boolean().default(false),
  ...pageQuery(),
});
export type SilenceListQuery = z.infer<typeof SilenceListQuery>;

export const SilenceList = z.object({
  silences: z.array(Silence),
  count: z.number().int().describe('silences matching the filters, before limit/offset'),
});

export const SilenceIdParams = z.object({ id: z.string().min(1).max(256) });

/** What the gateway stores: the response form without `active`, which depends on the time of reading. */
export const StoredSilence = Silence.omit({ active: true });
export type StoredSilence = z.infer<typeof StoredSilence>;
