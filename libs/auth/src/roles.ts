import { errors } from '@sluice/core';

/**
 * Roles say what kind of operation a caller may perform; grants (grants.ts) say on which
 * tenants/namespaces/providers/actions. Both must allow a request: a viewer cannot dispatch even
 * with a matching grant, an operator cannot reload rules even with `actions: ['*']`.
 */
export const ROLES = ['admin', 'operator', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export type Permission =
  /** POST /v1/dispatch, batch, replay. */
  | 'dispatch'
  /** GET /v1/stream. */
  | 'stream_subscribe'
  /** Audit, rules, events, groups, silences and time-interval reads; the rules playground. */
  | 'read'
  /** Create, replace, delete, enable/disable API rules (rules reload is `admin`). */
  | 'rules_manage'
  /** Create, replace, delete quota policies. */
  | 'quotas_manage'
  /** Create, edit, expire and extend silences. */
  | 'silences_manage'
  /** Create, replace and delete time intervals. */
  | 'time_intervals_manage'
  /** Trip and reset circuit breakers. */
  | 'circuit_breaker_manage'
  /** Everything else that changes the gateway itself. */
  | 'admin';

/** The one permission table. */
const ROLE_PERMISSIONS: Readonly<Record<Permission, readonly Role[]>> = Object.freeze({
  dispatch: ['admin', 'operator'],
  stream_subscribe: ['admin', 'operator', 'viewer'],
  read: ['admin', 'operator', 'viewer'],
  rules_manage: ['admin', 'operator'],
  quotas_manage: ['admin'],
  silences_manage: ['admin', 'operator'],
  time_intervals_manage: ['admin', 'operator'],
  circuit_breaker_manage: ['admin', 'operator'],
  admin: ['admin'],
});

export const PERMISSIONS = Object.keys(ROLE_PERMISSIONS) as Permission[];

export function roleAllows(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[permission].includes(role);
}

/** Throws 403 when the role lacks the permission. */
export function assertRoleAllows(role: Role, permission: Permission): void {
  if (!roleAllows(role, permission)) throw errors.forbidden(`forbidden: role ${role} lacks the ${permission} permission`);
}

/** Case-insensitive; null for anything that is not a known role. */
export function parseRole(text: string): Role | null {
  const lower = text.trim().toLowerCase();
  return (ROLES as readonly string[]).includes(lower) ? (lower as Role) : null;
}
