import { errors } from '@sluice/core';
import type { z } from 'zod';

/**
 * Runs a zod schema over an already ajv-validated request part, for the checks JSON Schema
 * cannot carry (refinements: start before end, a known time zone). Its problems are the same
 * 400 VALIDATION_FAILED as ajv's, with dotted paths.
 */
export function parseRequest<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw errors.validation(parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })));
}
