import type { Feature, FeatureContext } from '../feature.js';
import type { RetentionRepository } from '../retention/retention-repository.js';
import { createAudit, type AuditParts } from './create-audit.js';

export interface AuditFeature extends Feature {
  readonly parts: AuditParts;
}

/** The audit trail, its analytics and coverage rollups, and the recorder the gateway writes each dispatch through. */
export function auditFeature(ctx: FeatureContext, retention: RetentionRepository): AuditFeature {
  return { name: 'audit', parts: createAudit(ctx.config, { ...ctx, retention }) };
}
