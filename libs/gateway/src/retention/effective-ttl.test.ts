import type { RetentionPolicy } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { effectiveAuditTtlMs } from './effective-ttl.js';

const policy = (over: Partial<RetentionPolicy> = {}): RetentionPolicy => ({
  id: 'p',
  namespace: 'ns',
  tenant: 't',
  enabled: true,
  compliance_hold: false,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('effectiveAuditTtlMs', () => {
  it('uses the gateway TTL without a policy, or when the policy sets no audit TTL', () => {
    expect(effectiveAuditTtlMs(undefined, 3600, false)).toBe(3_600_000);
    expect(effectiveAuditTtlMs(policy({ state_ttl_seconds: 5 }), 3600, false)).toBe(3_600_000);
  });

  it("prefers the policy's audit_ttl_seconds", () => {
    expect(effectiveAuditTtlMs(policy({ audit_ttl_seconds: 60 }), 3600, false)).toBe(60_000);
  });

  it('never expires under a compliance hold, whatever the policy TTL', () => {
    expect(effectiveAuditTtlMs(policy({ compliance_hold: true, audit_ttl_seconds: 60 }), 3600, false)).toBeNull();
  });

  it('never expires with immutable audit, whatever the policy says', () => {
    expect(effectiveAuditTtlMs(undefined, 3600, true)).toBeNull();
    expect(effectiveAuditTtlMs(policy({ audit_ttl_seconds: 60 }), 3600, true)).toBeNull();
  });

  it('ignores a disabled policy, hold included', () => {
    expect(effectiveAuditTtlMs(policy({ enabled: false, audit_ttl_seconds: 60 }), 3600, false)).toBe(3_600_000);
    expect(effectiveAuditTtlMs(policy({ enabled: false, compliance_hold: true }), 3600, false)).toBe(3_600_000);
  });
});
