import { readFileSync } from 'node:fs';
import { ERROR_CODES, ERROR_STATUS } from '@sluice/core';
import { describe, expect, it } from 'vitest';

/** docs/errors.md and the registry in libs/core must list the same codes with the same statuses. */
describe('error registry vs docs/errors.md', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])] as const);

  it('documents every code with its status', () => {
    expect(Object.fromEntries(rows)).toEqual({ ...ERROR_STATUS });
  });

  it('documents no code twice', () => {
    expect(rows.length).toBe(ERROR_CODES.length);
  });
});
