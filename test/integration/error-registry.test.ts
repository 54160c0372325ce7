import { readFileSync } from 'node:fs';
import { ERROR_CODES, ERROR_STATUS, FAILURE_CODE_LIST, FAILURE_CODES } from '@sluice/core';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

/** The text of one `## <title>` section, up to the next `## ` heading. */
function section(title: string): string {
  const start = doc.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/errors.md has no section "## ${title}"`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** Table rows `| \`CODE\` | <second column> |` of a section, as [code, second column] pairs. */
function rows(text: string): (readonly [string, string])[] {
  return [...text.matchAll(/^\| `([A-Z_]+)` \| ([^|]+?) \|/gm)].map((m) => [m[1] ?? '', m[2] ?? ''] as const);
}

/** docs/errors.md and the registries in libs/core must list the same codes, both ways. */
describe('HTTP error registry vs docs/errors.md', () => {
  const http = rows(section('HTTP error codes'));

  it('documents every code with its status, and no code the registry lacks', () => {
    expect(Object.fromEntries(http.map(([code, status]) => [code, Number(status)]))).toEqual({ ...ERROR_STATUS });
  });

  it('documents no code twice', () => {
    expect(http.length).toBe(ERROR_CODES.length);
  });
});

describe('dispatch failure codes vs docs/errors.md', () => {
  const failures = rows(section('Dispatch failure codes'));

  it('documents every failure code with its retryability, and no code the registry lacks', () => {
    const registered = Object.fromEntries(FAILURE_CODE_LIST.map((code) => [code, FAILURE_CODES[code].retryable]));
    expect(Object.fromEntries(failures)).toEqual(registered);
  });

  it('documents no failure code twice', () => {
    expect(failures.length).toBe(FAILURE_CODE_LIST.length);
  });
});
