import type { Feature, FeatureContext } from '../feature.js';
import { StateMachineRegistry } from './state-machine.js';
import { stateMachineRuleAction } from './state-machine-action.js';
import { StateMachineService } from './state-machine-service.js';
import { STATE_TIMEOUT_KIND } from './event-keys.js';
import { runStateTimeoutJob } from './timeout-job.js';

export interface StateMachinesFeature extends Feature {
  readonly service: StateMachineService;
}

/** Event lifecycles: the state_machine rule action, /v1/events, state timeouts, and resolved events' retention. */
export function stateMachinesFeature(ctx: FeatureContext): StateMachinesFeature {
  const { state, scheduler, clock, logger, events } = ctx;
  const service = new StateMachineService({ state, scheduler, clock, logger, events, machines: new StateMachineRegistry(ctx.config.state_machines) });
  return {
    name: 'state-machines',
    service,
    ruleActions: { state_machine: stateMachineRuleAction(service) },
    jobs: { [STATE_TIMEOUT_KIND]: { concurrency: 8, handler: (job) => runStateTimeoutJob(service, job) } },
    retentionSources: [service.retentionSource()],
  };
}
