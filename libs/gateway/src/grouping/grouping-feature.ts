import type { Provider } from '@sluice/providers';
import { type Feature, type FeatureContext, redeclared } from '../feature.js';
import { GROUP_FLUSH_KIND, GROUP_SWEEP_KIND } from './group-keys.js';
import { groupRuleAction } from './group-rule-action.js';
import { GROUP_SWEEP_GRACE_MS, scheduleGroupSweep } from './group-schedule.js';
import { GroupService } from './group-service.js';

export interface GroupingFeature extends Feature {
  readonly service: GroupService<Provider>;
}

/** Event grouping: the group rule action, /v1/groups, the flush jobs and the sweep that re-enqueues lost flushes. */
export function groupingFeature(ctx: FeatureContext): GroupingFeature {
  const { state, scheduler, clock, providers, executor, events, logger, metrics } = ctx;
  const { timeout_seconds, max_retries, backoff_max_ms } = ctx.config.executor;
  const service = new GroupService<Provider>({
    state,
    scheduler,
    clock,
    providers,
    executor,
    events,
    logger,
    // One delivery may take every executor attempt and backoff; after that its holder is presumed dead.
    leaseMs: timeout_seconds * 1000 * (max_retries + 1) + backoff_max_ms * max_retries + 5000,
    onFlush: (result) => metrics.groupFlushes.inc({ result }),
    onDropped: (count) => metrics.groupEventsDropped.inc(count),
  });
  return {
    name: 'grouping',
    service,
    ruleActions: { group: groupRuleAction(service) },
    jobs: {
      [GROUP_FLUSH_KIND]: { concurrency: 8, handler: (job) => service.runFlushJob(job) },
      [GROUP_SWEEP_KIND]: { concurrency: 1, handler: async () => void (await service.sweep(GROUP_SWEEP_GRACE_MS)) },
    },
    // The backstop for flushes whose enqueue died with a process (one schedule id, one worker per sweep).
    declareSchedules: () => scheduleGroupSweep(scheduler),
    repairSchedules: redeclared((onlyIfUnchanged) => scheduleGroupSweep(scheduler, onlyIfUnchanged)),
  };
}
