import type { Feature, FeatureContext } from '../feature.js';
import { TimeIntervalService } from './time-interval-service.js';
import { timeIntervalsStage } from './time-intervals-stage.js';

export interface TimeIntervalsFeature extends Feature {
  readonly service: TimeIntervalService;
}

/** Time intervals: CRUD shared by every replica, and the stage applying a matched rule's mute and active intervals. Built before the rules, which check the names they give. */
export async function timeIntervalsFeature(ctx: FeatureContext): Promise<TimeIntervalsFeature> {
  const { state, clock, logger } = ctx;
  const service = new TimeIntervalService({ state, clock, logger, syncIntervalMs: ctx.config.time_intervals.sync_interval_seconds * 1000 });
  await service.start();
  return { name: 'time-intervals', service, stages: [timeIntervalsStage(service, clock)], close: () => service.close() };
}
