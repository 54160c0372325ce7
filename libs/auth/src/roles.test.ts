import { SluiceError } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { assertRoleAllows, parseRole, PERMISSIONS, roleAllows, type Permission, type Role } from './roles.js';

describe('role permissions', () => {
  const table: [Permission, admin: boolean, operator: boolean, viewer: boolean][] = [
    ['dispatch', true, true, false],
    ['stream_subscribe', true, true, true],
    ['read', true, true, true],
    ['rules_manage', true, true, false],
    ['quotas_manage', true, false, false],
    ['silences_manage', true, true, false],
    ['time_intervals_manage', true, true, false],
    ['circuit_breaker_manage', true, true, false],
    ['admin', true, false, false],
  ];

  it('covers every permission', () => {
    expect(table.map(([p]) => p).sort()).toEqual([...PERMISSIONS].sort());
  });

  it.each(table)('%s: admin=%s operator=%s viewer=%s', (permission, admin, operator, viewer) => {
    expect(roleAllows('admin', permission)).toBe(admin);
    expect(roleAllows('operator', permission)).toBe(operator);
    expect(roleAllows('viewer', permission)).toBe(viewer);
  });

  it('assertRoleAllows throws a 403 naming role and permission', () => {
    expect(() => assertRoleAllows('operator', 'dispatch')).not.toThrow();
    try {
      assertRoleAllows('viewer', 'dispatch');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(SluiceError);
      expect((err as SluiceError).statusCode).toBe(403);
      expect((err as SluiceError).message).toBe('forbidden: role viewer lacks the dispatch permission');
    }
  });
});

describe('parseRole', () => {
  it.each<[string, Role | null]>([
    ['admin', 'admin'],
    ['Operator', 'operator'],
    [' VIEWER ', 'viewer'],
    ['root', null],
    ['', null],
  ])('%j → %s', (text, role) => {
    expect(parseRole(text)).toBe(role);
  });
});
