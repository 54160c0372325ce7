/**
 * The order of the dispatch pipeline, fixed by the spec: quota before rules (an over-quota tenant
 * is blocked whatever the rules say), then guardrails, semantic matching, approvals and chains,
 * and provider execution last. A feature plugs in by providing the stage of its name.
 */
export const STAGE_ORDER = ['quota', 'rules', 'guardrails', 'semantic', 'approval', 'chain', 'execute'] as const;

export type StageName = (typeof STAGE_ORDER)[number];
