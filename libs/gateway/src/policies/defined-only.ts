/** Drops keys whose value is undefined (absent from a patch), so a partial update never blanks a field; null stays. */
export function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;
}
