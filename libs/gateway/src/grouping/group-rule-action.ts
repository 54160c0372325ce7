import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import type { GroupActionSpec, GroupService } from './group-service.js';

/** The `group` rule action: the action joins its group instead of executing (outcome `grouped`). */
export function groupRuleAction<P>(grouping: GroupService<P>): RuleActionHandler {
  return (ctx, { rule, action }) => grouping.add(ctx.action, ctx.provider, rule.name, action as GroupActionSpec);
}
