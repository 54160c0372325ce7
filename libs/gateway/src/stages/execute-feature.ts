import type { Feature, FeatureContext } from '../feature.js';
import { executeStage } from './execute-stage.js';

/** The last stage: the action through its provider, with the executor's retries, timeout and concurrency cap. */
export function executeFeature(ctx: FeatureContext): Feature {
  return { name: 'execute', stages: [executeStage(ctx.providers, ctx.executor)] };
}
