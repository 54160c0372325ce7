import type { Approval } from '@sluice/core';
import type { RuleAction } from '@sluice/rules';
import type { AuditRecorder } from '../audit/audit-recorder.js';
import type { Feature, FeatureContext } from '../feature.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { APPROVAL_EXPIRE_KIND, APPROVAL_FORGET_KIND, ApprovalService, type ApprovalDecider, type Notifier } from './approval-service.js';
import { ApprovalSigner, loadSigningKeys } from './approval-signing.js';

export interface ApprovalsFeature extends Feature {
  readonly service: ApprovalService;
}

type RequireApproval = Extract<RuleAction, { type: 'require_approval' }>;

/** Human approvals: the `require_approval` rule action, signed decision links, and the job expiring unanswered ones. */
export async function approvalsFeature(ctx: FeatureContext, audit: AuditRecorder | undefined): Promise<ApprovalsFeature> {
  const { state, clock, logger, scheduler, events, providers, executor } = ctx;
  const signer = new ApprovalSigner(await loadSigningKeys(ctx.config.server.approval_keys, state));
  const notify: Notifier = async (name, action) => {
    const provider = providers.get(name);
    if (!provider) throw new Error(`notify_provider ${name} is not configured`);
    return (await executor.execute(provider, action)).ok;
  };
  // A rejected or expired action was suppressed by its approval rule: recorded under its action id, beside the request's record.
  const auditUnexecuted = audit
    ? async (approval: Approval, decider: ApprovalDecider | undefined, atMs: number) => {
        const reason = approval.status === 'expired' ? 'approval expired' : 'approval rejected';
        await audit.record({
          action: { ...approval.action, id: approval.action_id, created_at: approval.created_at, metadata: approval.action.metadata ?? {} },
          outcome: { outcome: 'suppressed', action_id: approval.action_id, rule: approval.rule, reason },
          verdict: 'require_approval',
          matchedRule: approval.rule,
          details: { approval_id: approval.id, decision: approval.status },
          caller: decider,
          dispatchedAtMs: atMs,
          completedAtMs: atMs,
        });
      }
    : undefined;
  const service = new ApprovalService({
    state,
    clock,
    logger,
    scheduler,
    events,
    signer,
    externalUrl: ctx.config.server.external_url,
    notify,
    ...(auditUnexecuted ? { auditUnexecuted } : {}),
    tracer: ctx.tracer,
  });
  const requireApproval: RuleActionHandler = (dispatch, { rule, action }) => {
    const a = action as RequireApproval;
    return service.request({ action: dispatch.action, rule: rule.name, message: a.message, ttlSeconds: a.ttl_seconds, notifyProvider: a.notify_provider });
  };
  return {
    name: 'approvals',
    service,
    ruleActions: { require_approval: requireApproval },
    jobs: {
      [APPROVAL_EXPIRE_KIND]: { concurrency: 4, handler: (job) => service.expire(job.data) },
      [APPROVAL_FORGET_KIND]: { concurrency: 4, handler: (job) => service.forget(job.data) },
    },
  };
}
