import type { RuleAction } from '@sluice/rules';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import type { StateMachineService } from './state-machine-service.js';

type StateMachineAction = Extract<RuleAction, { type: 'state_machine' }>;

/** The `state_machine` rule action: the outcome is the event's move (the provider is not called). */
export function stateMachineRuleAction(service: StateMachineService): RuleActionHandler {
  return async (ctx, { action }) => {
    const { state_machine, fingerprint_fields } = action as StateMachineAction;
    return service.applyAction(ctx.action, state_machine, fingerprint_fields);
  };
}
