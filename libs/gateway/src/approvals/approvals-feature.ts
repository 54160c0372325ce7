import type { RuleAction } from '@sluice/rules';
import type { Feature, FeatureContext } from '../feature.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { APPROVAL_EXPIRE_KIND, ApprovalService, type Notifier } from './approval-service.js';
import { ApprovalSigner, loadSigningKeys } from './approval-signing.js';

export interface ApprovalsFeature extends Feature {
  readonly service: ApprovalService;
}

type RequireApproval = Extract<RuleAction, { type: 'require_approval' }>;

/** Human approvals: the `require_approval` rule action, signed decision links, and the job expiring unanswered ones. */
export async function approvalsFeature(ctx: FeatureContext): Promise<ApprovalsFeature> {
  const { state, clock, logger, scheduler, events, providers, executor } = ctx;
  const signer = new ApprovalSigner(await loadSigningKeys(ctx.config.server.approval_keys, state));
  const notify: Notifier = async (name, action) => {
    const provider = providers.get(name);
    if (!provider) throw new Error(`notify_provider ${name} is not configured`);
    return (await executor.execute(provider, action)).ok;
  };
  const service = new ApprovalService({ state, clock, logger, scheduler, events, signer, externalUrl: ctx.config.server.external_url, notify });
  const requireApproval: RuleActionHandler = (dispatch, { rule, action }) => {
    const a = action as RequireApproval;
    return service.request({ action: dispatch.action, rule: rule.name, message: a.message, ttlSeconds: a.ttl_seconds, notifyProvider: a.notify_provider });
  };
  return {
    name: 'approvals',
    service,
    ruleActions: { require_approval: requireApproval },
    jobs: { [APPROVAL_EXPIRE_KIND]: { concurrency: 4, handler: (job) => service.expire(job.data) } },
  };
}
