import type { ComplianceConfig } from '@sluice/config';

export interface ComplianceStatus {
  mode: 'none' | 'soc2' | 'hipaa';
  /** A failed audit write fails the dispatch (500) instead of being logged and counted. */
  sync_audit_writes: boolean;
  /** Records never expire and nothing deletes them. */
  immutable_audit: boolean;
  /** Records of each (namespace, tenant) are linked in a SHA-256 chain. */
  hash_chain: boolean;
}

const PRESETS: Record<ComplianceStatus['mode'], Omit<ComplianceStatus, 'mode'>> = {
  none: { sync_audit_writes: false, immutable_audit: false, hash_chain: false },
  soc2: { sync_audit_writes: true, immutable_audit: false, hash_chain: true },
  hipaa: { sync_audit_writes: true, immutable_audit: true, hash_chain: true },
};

/** The mode's presets with the explicit overrides applied. */
export function resolveCompliance(config: ComplianceConfig): ComplianceStatus {
  const preset = PRESETS[config.mode];
  return {
    mode: config.mode,
    sync_audit_writes: config.sync_audit_writes ?? preset.sync_audit_writes,
    immutable_audit: config.immutable_audit ?? preset.immutable_audit,
    hash_chain: config.hash_chain ?? preset.hash_chain,
  };
}
