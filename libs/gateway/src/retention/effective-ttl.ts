import type { RetentionPolicy } from '@sluice/core';

/**
 * The lifetime of an audit record being written now, in ms; null when it never expires. Most
 * specific first: immutable audit (nothing is ever deleted), the policy's compliance hold, the
 * policy's audit_ttl_seconds, the gateway-wide TTL. A disabled policy is ignored (the gateway
 * default applies), as the reaper ignores it. Computed once per record at write time; a later
 * policy change does not touch records already written.
 */
export function effectiveAuditTtlMs(policy: RetentionPolicy | undefined, gatewayTtlSeconds: number, immutableAudit: boolean): number | null {
  if (immutableAudit) return null;
  const active = policy?.enabled ? policy : undefined;
  if (active?.compliance_hold) return null;
  return (active?.audit_ttl_seconds ?? gatewayTtlSeconds) * 1000;
}
