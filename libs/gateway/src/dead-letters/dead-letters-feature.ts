import type { Feature, FeatureContext } from '../feature.js';
import type { ExhaustedHandler } from '../stages/execute-stage.js';
import { DeadLetterQueue } from './dead-letter-queue.js';

export interface DeadLettersFeature extends Feature {
  /** Null while `executor.dlq_enabled` is off. */
  readonly queue: DeadLetterQueue | null;
  /** What the execute stage calls with an exhausted failure; absent while off. */
  readonly onExhausted: ExhaustedHandler | undefined;
}

/** The dead-letter queue (`executor.dlq_enabled`): failed actions kept per tenant for retry or drain. */
export function deadLettersFeature(ctx: FeatureContext): DeadLettersFeature {
  const { executor: config } = ctx.config;
  if (!config.dlq_enabled) return { name: 'dead-letters', queue: null, onExhausted: undefined };
  const queue = new DeadLetterQueue({
    state: ctx.state,
    clock: ctx.clock,
    logger: ctx.logger,
    maxPerTenant: config.dlq_max_entries_per_tenant,
    onQueued: () => ctx.metrics.deadLetters.inc(),
    onDropped: () => ctx.metrics.deadLettersDropped.inc(),
  });
  const onExhausted: ExhaustedHandler = (dispatch, error) => queue.push(dispatch.action, dispatch.provider, error);
  return { name: 'dead-letters', queue, onExhausted };
}
