import type { Feature, FeatureContext } from '../feature.js';
import { executeStage, type ExhaustedHandler } from './execute-stage.js';

/** The last stage: the action through its provider, with the executor's retries, timeout and concurrency cap; exhausted failures go to `onExhausted` (the dead-letter queue) when given. */
export function executeFeature(ctx: FeatureContext, onExhausted?: ExhaustedHandler): Feature {
  return { name: 'execute', stages: [executeStage(ctx.providers, ctx.executor, onExhausted)] };
}
