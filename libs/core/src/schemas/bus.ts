import { z } from 'zod';
import { boundedName } from './names.js';

const Labels = z.record(z.string().max(128), z.string().max(512));
/** A JSON Schema (draft 2020-12) document: an object, or `true`/`false`. */
const SchemaDocument = z.union([z.record(z.string(), z.unknown()), z.boolean()]);

export const BusSchemaInput = z.strictObject({
  subject: boundedName(256),
  namespace: boundedName(),
  tenant: boundedName(),
  body: SchemaDocument.describe('the JSON Schema (draft 2020-12); compiled before it is stored'),
  labels: Labels.optional(),
});
export type BusSchemaInput = z.infer<typeof BusSchemaInput>;

export const BusSchema = z.object({
  subject: z.string(),
  version: z.number().int().describe('assigned by the server: 1, then max + 1 per (namespace, tenant, subject); never reused'),
  namespace: z.string(),
  tenant: z.string(),
  format: z.literal('json_schema_2020_12'),
  body: SchemaDocument,
  labels: Labels,
  created_at: z.string(),
});
export type BusSchema = z.infer<typeof BusSchema>;

export const BusSchemaListQuery = z.object({
  namespace: z.string().optional(),
  tenant: z.string().optional(),
  subject: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});
export type BusSchemaListQuery = z.infer<typeof BusSchemaListQuery>;

export const BusSchemaList = z.object({ schemas: z.array(BusSchema), count: z.number().int() });

export const BusSubjectParams = z.object({ namespace: boundedName(), tenant: boundedName(), subject: boundedName(256) });
export type BusSubjectParams = z.infer<typeof BusSubjectParams>;

export const BusSchemaVersionParams = BusSubjectParams.extend({ version: z.coerce.number().int().min(1) });
export type BusSchemaVersionParams = z.infer<typeof BusSchemaVersionParams>;

export const BusTopicInput = z.strictObject({
  namespace: boundedName(),
  tenant: boundedName(),
  name: boundedName(),
  description: z.string().max(1024).optional(),
});
export type BusTopicInput = z.infer<typeof BusTopicInput>;

export const BusTopic = z.object({
  topic: z.string().describe('<namespace>.<tenant>.<name>: what publish names'),
  namespace: z.string(),
  tenant: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  schema_subject: z.string().nullable().describe('bound schema: every publish is validated against it'),
  schema_version: z.number().int().nullable(),
  created_at: z.string(),
});
export type BusTopic = z.infer<typeof BusTopic>;

export const BusTopicListQuery = z.object({ namespace: z.string().optional(), tenant: z.string().optional() });
export type BusTopicListQuery = z.infer<typeof BusTopicListQuery>;

export const BusTopicList = z.object({ topics: z.array(BusTopic), count: z.number().int() });

export const BusTopicParams = z.object({ namespace: boundedName(), tenant: boundedName(), name: boundedName() });
export type BusTopicParams = z.infer<typeof BusTopicParams>;

export const BusBindInput = z.strictObject({ subject: boundedName(256), version: z.number().int().min(1) });
export type BusBindInput = z.infer<typeof BusBindInput>;

export const BusBinding = z.object({ topic: z.string(), subject: z.string(), version: z.number().int() });

export const BusPublishInput = z.strictObject({ topic: z.string().min(1).max(800), payload: z.unknown() });
export type BusPublishInput = z.infer<typeof BusPublishInput>;

export const BusPublished = z.object({
  topic: z.string(),
  message_id: z.string().describe('the entry id in the topic’s log (Redis Stream id)'),
  validated: z.boolean(),
  subject: z.string().nullable(),
  version: z.number().int().nullable(),
});

/** The 400 of a publish whose payload fails the bound schema (spec: at most 10 issues). */
export const BusValidationFailure = z.object({
  error: z.string(),
  code: z.string(),
  subject: z.string(),
  version: z.number().int(),
  issues: z.array(z.object({ path: z.string().describe('JSON Pointer into the payload; "" for the root'), message: z.string() })),
});

export const BusSubscriptionInput = z.strictObject({
  topic: z.string().min(1).max(800),
  from: z.enum(['latest', 'earliest']).default('latest').describe('latest: messages published from now on; earliest: everything the topic still holds'),
});
export type BusSubscriptionInput = z.infer<typeof BusSubscriptionInput>;

export const BusSubscription = z.object({
  id: z.string().describe('also the name of its consumer group on the topic’s stream'),
  topic: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  from: z.enum(['latest', 'earliest']),
  created_at: z.string(),
});
export type BusSubscription = z.infer<typeof BusSubscription>;

export const BusSubscriptionParams = z.object({ id: z.string().min(1).max(256) });

export const BusReceiveQuery = z.object({
  consumer: boundedName(128).describe(
    'who is reading: messages handed to a consumer wait for its ack; another consumer gets them after the visibility timeout',
  ),
  max: z.coerce.number().int().min(1).max(100).default(10),
  wait_seconds: z.coerce.number().int().min(0).max(30).default(0).describe('long poll: wait this long for a message when none is ready'),
});
export type BusReceiveQuery = z.infer<typeof BusReceiveQuery>;

const BusMessage = z.object({
  message_id: z.string(),
  payload: z.unknown(),
  published_at: z.string(),
  deliveries: z.number().int().describe('1 the first time; more when redelivered after the visibility timeout'),
});

export const BusMessages = z.object({ messages: z.array(BusMessage) });

/** Largest part of a Redis Stream id: each of `<ms>-<seq>` is an unsigned 64-bit integer. */
const UINT64_MAX = 18_446_744_073_709_551_615n;

/** A message id `<ms>-<seq>`, each part at most 2^64 - 1: Redis refuses a larger one outright (a 500 otherwise). */
const MessageId = z
  .string()
  .regex(/^\d{1,20}-\d{1,20}$/, 'a message id')
  .refine((id) => id.split('-').every((part) => /^\d{1,20}$/.test(part) && BigInt(part) <= UINT64_MAX), 'a message id: each part at most 18446744073709551615');

export const BusAckInput = z.strictObject({
  message_ids: z.array(MessageId).min(1).max(1000),
});
export type BusAckInput = z.infer<typeof BusAckInput>;

export const BusAcked = z.object({ acked: z.number().int().describe('how many were pending (others were already acked or dead-lettered)') });

export const BusLag = z.object({
  subscription: z.string(),
  topic: z.string(),
  pending: z.number().int().describe('delivered, not acknowledged'),
  undelivered: z.number().int().describe('published, not yet handed to a consumer'),
  lag: z.number().int().describe('pending + undelivered: every message not acknowledged'),
  held: z
    .number()
    .int()
    .describe(
      'messages the topic holds now (about bus.max_len at most): when undelivered equals it for a subscription that has read something, the topic was trimmed up to its position, and what it had not read before them may be gone',
    ),
});

export const BusDeadLetters = z.object({
  messages: z.array(BusMessage.extend({ dead_lettered_at: z.string() })),
});
