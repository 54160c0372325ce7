import { type Feature, type FeatureContext, redeclared } from '../feature.js';
import { SilenceService } from './silence-service.js';
import { silencesStage } from './silences-stage.js';

/** The job kind (a durable BullMQ queue name: never rename) and the one schedule id of the silence reaper. */
const SILENCE_REAP_KIND = 'silence-reap';
const SILENCE_REAP_SCHEDULE_ID = 'silence-reaper';

export interface SilencesFeature extends Feature {
  readonly service: SilenceService;
}

/**
 * Silences: CRUD shared by every replica, the pipeline stage that mutes what they cover, and a
 * repeatable job (one per deployment) deleting those expired longer than the retention. Expiry
 * itself needs no job: the window is checked at dispatch.
 */
export async function silencesFeature(ctx: FeatureContext): Promise<SilencesFeature> {
  const { state, clock, logger, scheduler } = ctx;
  const config = ctx.config.silences;
  const service = new SilenceService({ state, clock, logger, syncIntervalMs: config.sync_interval_seconds * 1000 });
  await service.start();
  const log = logger.child({ component: 'silences' });
  const declareReap = (onlyIfUnchanged = false) =>
    scheduler.repeat(SILENCE_REAP_KIND, { id: SILENCE_REAP_SCHEDULE_ID, everyMs: config.reap_interval_seconds * 1000, onlyIfUnchanged });
  return {
    name: 'silences',
    service,
    stages: [silencesStage(service, clock)],
    jobs: {
      [SILENCE_REAP_KIND]: {
        concurrency: 1,
        handler: async () => {
          const deleted = await service.reap(config.retention_seconds * 1000);
          if (deleted > 0) log.info({ deleted }, 'expired silences past their retention deleted');
        },
      },
    },
    declareSchedules: () => declareReap(),
    repairSchedules: redeclared(declareReap),
    close: () => service.close(),
  };
}
