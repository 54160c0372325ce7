import { z } from 'zod';

/**
 * What to tell a client whose value missed one of zod's string formats. Ajv reports the format's
 * pattern, a few hundred characters of regular expression nobody can read; the message says what
 * the value should look like instead. Keyed by the pattern zod writes for the format.
 */
const FORMAT_MESSAGES = new Map<string, string>();

function learn(schema: z.ZodType, message: string): void {
  const { pattern } = z.toJSONSchema(schema) as { pattern?: unknown };
  if (typeof pattern === 'string') FORMAT_MESSAGES.set(pattern, message);
}

learn(z.iso.datetime({ offset: true }), 'must be an RFC 3339 date-time with a time zone, Z or ±HH:MM (2026-01-01T00:00:00Z)');

/** The readable message for a `pattern` error, when the pattern is a known format's. */
export function formatMessage(pattern: unknown): string | undefined {
  return typeof pattern === 'string' ? FORMAT_MESSAGES.get(pattern) : undefined;
}
