/**
 * The order of the dispatch pipeline, fixed by the spec: quota before rules (an over-quota tenant
 * is blocked whatever the rules say); the rules decide, guardrails may overrule, silences and the
 * matched rule's time intervals may mute; only then is the matched rule's action applied (so a
 * muted action takes no dedup key, throttle slot or group place), then semantic matching,
 * approvals and chains, and provider execution last. A feature plugs in by providing the stage of its name.
 */
export const STAGE_ORDER = ['quota', 'rules', 'guardrails', 'silences', 'time_intervals', 'rule_action', 'semantic', 'approval', 'chain', 'execute'] as const;

export type StageName = (typeof STAGE_ORDER)[number];
