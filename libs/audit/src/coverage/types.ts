import type { AuditRecord, CoverageEntry } from '@sluice/core';

/** The fields of an audit record the coverage rollups keep. */
export type CoverageRecord = Pick<AuditRecord, 'namespace' | 'tenant' | 'provider' | 'action_type' | 'matched_rule' | 'dispatched_at'>;

export interface CoverageRollupQuery {
  /** Exact matches. */
  namespace?: string | undefined;
  tenant?: string | undefined;
  /** Epoch ms; widened to whole UTC days (from rounded down, to rounded up, end exclusive). */
  fromMs: number;
  toMs: number;
  /** What the caller may see (grants); combinations it rejects are left out. */
  visible?: ((namespace: string, tenant: string) => boolean) | undefined;
}

export interface CoverageRollupResult {
  /** The whole UTC days counted: [scannedFromMs, scannedToMs). */
  scannedFromMs: number;
  scannedToMs: number;
  /** Uncovered, then partially covered, then covered; each group by namespace, tenant, provider, action_type. */
  entries: CoverageEntry[];
}
