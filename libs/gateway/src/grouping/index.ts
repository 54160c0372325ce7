export { GROUP_FLUSH_KIND, GROUP_SWEEP_KIND, flushId, type FlushJobData, type GroupScope } from './group-keys.js';
export { groupIdentity, readGroupField } from './group-fields.js';
export { planAppend, planClose, planFlush, QUIET_REPEATS, type FlushReason } from './group-transitions.js';
export { GroupService, RESOLVED_TTL_MS, type GroupActionSpec, type GroupServiceDeps } from './group-service.js';
export { FLUSH_JOB_ATTEMPTS, type DeliveryResult } from './group-notifier.js';
export { notificationAction, type Outbox } from './group-outbox.js';
export { groupRuleAction } from './group-rule-action.js';
export { GROUP_SWEEP_GRACE_MS, GROUP_SWEEP_INTERVAL_MS, scheduleGroupSweep } from './group-schedule.js';
