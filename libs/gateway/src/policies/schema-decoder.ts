/** Parses with a zod schema (anything with safeParse). */
export interface RecordSchema<T> {
  safeParse(raw: unknown): { success: true; data: T } | { success: false };
}

/** A record repository's `decode`: the stored JSON through the schema, null when it no longer fits. */
export function decodeWith<T>(schema: RecordSchema<T>): (raw: unknown) => T | null {
  return (raw) => {
    const parsed = schema.safeParse(raw);
    return parsed.success ? parsed.data : null;
  };
}
