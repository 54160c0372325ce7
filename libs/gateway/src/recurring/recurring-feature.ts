import type { Feature, FeatureContext } from '../feature.js';
import { RECURRING_FIRE_KIND } from './recurring-keys.js';
import { RecurringService } from './recurring-service.js';

export interface RecurringFeature extends Feature {
  readonly service: RecurringService;
}

/** Recurring (cron) actions: CRUD, pause and resume, and the occurrence jobs that dispatch through the gateway. */
export function recurringFeature(ctx: FeatureContext): RecurringFeature {
  const { state, scheduler, clock, logger, events } = ctx;
  const service = new RecurringService({ state, scheduler, clock, logger, events, maxPerTenant: ctx.config.background.max_recurring_actions_per_tenant });
  return {
    name: 'recurring',
    service,
    jobs: { [RECURRING_FIRE_KIND]: { concurrency: 4, handler: async (job, env) => void (await service.fire(job.data, env.gateway)) } },
    // BullMQ may have lost the schedules (a new or flushed Redis): re-declare one per enabled action from state.
    declareSchedules: async () => void (await service.declareAll()),
    // An API replica killed between an action's write and its schedule: overdue actions are declared again.
    repairSchedules: () => service.declareOverdue(),
  };
}
