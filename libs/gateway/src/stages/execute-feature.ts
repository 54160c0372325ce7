import type { FailureInfo } from '@sluice/core';
import { logThrottle } from '@sluice/telemetry';
import type { Feature, FeatureContext } from '../feature.js';
import type { DispatchContext } from '../pipeline/context.js';
import { executeStage, type ExecuteStageOptions } from './execute-stage.js';

/** A provider failing the same way is logged at most once per this long (every failed action is counted in sluice_actions_total). */
const FAILURE_LOG_WINDOW_MS = 30_000;

/**
 * The last stage: the action through its provider, with the executor's retries, timeout and
 * concurrency cap, behind its circuit breaker when breakers are on; exhausted failures go to
 * `onExhausted` (the dead-letter queue) when given. A failed action is logged at warn, once per
 * provider and error code per window, without its payload.
 */
export function executeFeature(ctx: FeatureContext, opts: Omit<ExecuteStageOptions, 'onFailed'>): Feature {
  const log = ctx.logger.child({ component: 'execute' });
  const throttle = logThrottle(FAILURE_LOG_WINDOW_MS, () => ctx.clock.now());
  const onFailed = (dispatch: DispatchContext, error: FailureInfo) => {
    // A provider name is the caller's: an unknown one is throttled under one key, or every request could name another.
    const provider = ctx.providers.get(dispatch.provider) === undefined ? '(unknown)' : dispatch.provider;
    const suppressed = throttle(`${provider}\u0000${error.code}`);
    if (suppressed === null) return;
    const { action } = dispatch;
    log.warn(
      {
        provider: dispatch.provider,
        code: error.code,
        reason: error.message,
        attempts: error.attempts,
        action_id: action.id,
        namespace: action.namespace,
        tenant: action.tenant,
        suppressed,
      },
      'action failed',
    );
  };
  return { name: 'execute', stages: [executeStage(ctx.providers, ctx.executor, { ...opts, onFailed })] };
}
