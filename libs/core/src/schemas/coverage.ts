import { z } from 'zod';

const Filter = z.string().min(1).max(256);
const Count = z.number().int();

/** Query string of GET /v1/rules/coverage. */
export const CoverageQuery = z.object({
  namespace: Filter.optional(),
  tenant: Filter.optional(),
  from: z.iso.datetime({ offset: true }).optional().describe('start (RFC 3339); default: 7 days before `to`. Rounded down to the UTC day'),
  to: z.iso.datetime({ offset: true }).optional().describe('end (RFC 3339); default: now. Rounded up to the UTC day'),
});
export type CoverageQuery = z.infer<typeof CoverageQuery>;

/** One (namespace, tenant, provider, action_type) combination seen in the range. */
export const CoverageEntry = z.object({
  namespace: z.string(),
  tenant: z.string(),
  provider: z.string(),
  action_type: z.string(),
  total: Count.describe('actions of the combination'),
  covered: Count.describe('actions some rule matched'),
  uncovered: Count.describe('actions no rule matched'),
  matched_rules: z.array(z.string()).describe('the rules that matched them, sorted'),
});
export type CoverageEntry = z.infer<typeof CoverageEntry>;

export const CoverageReport = z.object({
  scanned_from: z.string().describe('start of the days counted (RFC 3339, UTC midnight)'),
  scanned_to: z.string().describe('end of the days counted, exclusive (RFC 3339, UTC midnight)'),
  total_actions: Count,
  unique_combinations: Count.describe('number of entries'),
  fully_covered: Count.describe('entries with every action matched by a rule'),
  partially_covered: Count.describe('entries with some actions matched'),
  uncovered: Count.describe('entries with no action matched'),
  rules_loaded: Count.describe('rules loaded now, enabled or not'),
  entries: z.array(CoverageEntry).describe('uncovered first, then partially covered, then covered; each group by namespace, tenant, provider, action_type'),
  unmatched_rules: z.array(z.string()).describe('enabled rules that matched no action counted here, sorted'),
});
export type CoverageReport = z.infer<typeof CoverageReport>;
