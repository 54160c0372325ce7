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
