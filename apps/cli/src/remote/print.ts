import type { Output } from './remote-options.js';

/** Rows of a table: the first is the header. */
export type Rows = readonly (readonly string[])[];

/** `json`: the value as the API answered it (pretty, for jq); `table`: aligned columns. */
export function print(output: Output, value: unknown, rows: () => Rows): void {
  process.stdout.write(output === 'json' ? `${JSON.stringify(value, null, 2)}\n` : table(rows()));
}

function table(rows: Rows): string {
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const lines = rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c] ?? 0))).join('  '));
  return `${lines.join('\n')}\n`;
}
