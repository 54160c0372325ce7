import { z } from 'zod';

/*
 * Alertmanager's wire format (API v2 and the webhook notification, version 4), as Prometheus,
 * Alertmanager and amtool send and read it. Field names are theirs (camelCase).
 */

const LabelSet = z.record(z.string().max(1024), z.string().max(4096)).describe('label name → value');
const Instant = z.iso.datetime({ offset: true }).describe('RFC 3339');

/** One alert of `POST /api/v2/alerts` (Prometheus's postableAlert). */
export const PostableAlert = z.object({
  labels: LabelSet.refine((l) => Object.keys(l).length > 0, 'an alert needs at least one label'),
  annotations: LabelSet.optional(),
  startsAt: Instant.optional(),
  endsAt: Instant.optional(),
  generatorURL: z.string().max(4096).optional(),
});
export type PostableAlert = z.infer<typeof PostableAlert>;

export const PostableAlerts = z.array(PostableAlert).max(1000).describe('at most 1000 alerts');

/** What Alertmanager's `webhook_configs` POST (version 4). */
export const AlertmanagerWebhook = z.object({
  version: z.literal('4'),
  groupKey: z.string().max(8192).optional(),
  truncatedAlerts: z.number().int().min(0).optional(),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string().max(1024),
  groupLabels: LabelSet.optional(),
  commonLabels: LabelSet.optional(),
  commonAnnotations: LabelSet.optional(),
  externalURL: z.string().max(4096).optional(),
  alerts: z
    .array(
      PostableAlert.extend({
        status: z.enum(['firing', 'resolved']),
        fingerprint: z.string().max(64).optional(),
      }),
    )
    .max(1000),
});
export type AlertmanagerWebhook = z.infer<typeof AlertmanagerWebhook>;

/** A silence matcher in Alertmanager's form: isRegex × isEqual are the four ops. */
export const AmMatcher = z.object({
  // A Prometheus label name, as Alertmanager checks it (a silence on any other name could not be found by amtool's filters).
  name: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a label name: letters, digits and _, not starting with a digit'),
  value: z.string().max(4096),
  isRegex: z.boolean(),
  isEqual: z.boolean().default(true),
});
export type AmMatcher = z.infer<typeof AmMatcher>;

/** `POST /api/v2/silences`: a new silence, or (with `id`) a change to one. */
export const PostableSilence = z.object({
  id: z.string().max(256).optional(),
  matchers: z.array(AmMatcher).min(1).max(64),
  startsAt: Instant,
  endsAt: Instant,
  createdBy: z.string().max(256),
  comment: z.string().max(4096),
});
export type PostableSilence = z.infer<typeof PostableSilence>;

export const GettableSilence = z.object({
  id: z.string(),
  status: z.object({ state: z.enum(['expired', 'active', 'pending']) }),
  updatedAt: z.string(),
  matchers: z.array(AmMatcher),
  startsAt: z.string(),
  endsAt: z.string(),
  createdBy: z.string(),
  comment: z.string(),
});
export type GettableSilence = z.infer<typeof GettableSilence>;

export const AmSilenceIdParams = z.object({ silenceID: z.string().min(1).max(256) });

export const AmSilencesQuery = z.object({
  filter: z
    .union([z.string().max(4096), z.array(z.string().max(4096)).max(64)])
    .optional()
    .describe('matchers such as alertname="Foo"; repeatable'),
  active: z.boolean().default(true),
  pending: z.boolean().default(true),
  expired: z.boolean().default(true),
});

export const AmStatus = z.object({
  cluster: z.object({
    name: z.string(),
    status: z.enum(['ready', 'settling', 'disabled']),
    peers: z.array(z.object({ name: z.string(), address: z.string() })),
  }),
  versionInfo: z.object({ version: z.string(), revision: z.string(), branch: z.string(), buildUser: z.string(), buildDate: z.string(), goVersion: z.string() }),
  config: z.object({ original: z.string() }),
  uptime: z.string(),
});
