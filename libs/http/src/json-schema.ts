import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/**
 * zod → JSON Schema (draft 2020-12), once per schema at route registration. Requests are
 * validated against the input form; responses are documented in their output form.
 */
export function requestSchema(schema: z.ZodType): JsonSchema {
  return strip(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonSchema);
}

export function responseSchema(schema: z.ZodType): JsonSchema {
  return strip(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as JsonSchema);
}

/** The OpenAPI document declares the dialect once; embedded schemas must not repeat `$schema`. */
function strip(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** The response of a route that answers 204: no body. */
export const noContent: JsonSchema = { type: 'null', description: 'done; no body' };
