import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PERMISSIONS, ROLES, roleAllows } from './roles.js';

describe('docs/auth.md', () => {
  const doc = readFileSync(new URL('../../../docs/auth.md', import.meta.url), 'utf8');

  it('has the permission table in step with ROLE_PERMISSIONS', () => {
    for (const permission of PERMISSIONS) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${permission}\` |`));
      expect(row, permission).toBeDefined();
      const marks = (row ?? '')
        .split('|')
        .slice(3, 6)
        .map((cell) => cell.trim() === '✓');
      expect(marks, permission).toEqual(ROLES.map((role) => roleAllows(role, permission)));
    }
  });

  it('keeps the Enforcement heading for the HTTP wiring', () => {
    expect(doc).toMatch(/^## Enforcement$/m);
  });
});
