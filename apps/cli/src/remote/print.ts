import { UNPRINTABLE } from '@sluice/core';
import type { Output } from './remote-options.js';

/** Rows of a table: the first is the header. */
export type Rows = readonly (readonly string[])[];

/** `json`: the value as the API answered it (pretty, for jq); `table`: aligned columns. */
export function print(output: Output, value: unknown, rows: () => Rows): void {
  endQuietlyWhenThePipeCloses();
  process.stdout.write(output === 'json' ? `${JSON.stringify(value, null, 2)}\n` : table(rows()));
}

function table(rows: Rows): string {
  const shown = rows.map((r) => r.map(visible));
  const widths = (shown[0] ?? []).map((_, c) => Math.max(...shown.map((r) => (r[c] ?? '').length)));
  const lines = shown.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c] ?? 0))).join('  '));
  return `${lines.join('\n')}\n`;
}

const CONTROLS = new RegExp(`[${UNPRINTABLE}]`, 'gu');

/**
 * A cell as text a terminal shows as it is: control characters (a line break forges a row, an
 * escape sequence moves the cursor) and bidirectional controls (they reorder what follows) are
 * written as `\u{…}`. Values tenants chose reach these tables; `-o json` keeps them exact.
 */
function visible(cell: string): string {
  return cell.replace(CONTROLS, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}

let pipeWatched = false;

/** A reader that stops early (`| head -1`) closes the pipe: end quietly, as Unix tools do, not with a stack trace. */
function endQuietlyWhenThePipeCloses(): void {
  if (pipeWatched) return;
  pipeWatched = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(0);
  });
}
