import type { Feature, FeatureContext } from '../feature.js';
import { executeStage, type ExecuteStageOptions } from './execute-stage.js';

/**
 * The last stage: the action through its provider, with the executor's retries, timeout and
 * concurrency cap, behind its circuit breaker when breakers are on; exhausted failures go to
 * `onExhausted` (the dead-letter queue) when given.
 */
export function executeFeature(ctx: FeatureContext, opts: ExecuteStageOptions): Feature {
  return { name: 'execute', stages: [executeStage(ctx.providers, ctx.executor, opts)] };
}
