/**
 * Orders strings by UTF-16 code units, as `<` does: the same order on every machine and locale
 * (localeCompare is not), and the order of Redis's and PostgreSQL's "C" collation for ASCII.
 */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
