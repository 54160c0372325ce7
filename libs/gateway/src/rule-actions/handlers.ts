import { randomBytes } from 'node:crypto';
import type { DispatchOutcome } from '@sluice/core';
import { applyMergePatch, type RuleAction, type RuleActionType } from '@sluice/rules';
import type { RuleActionHandler } from './rule-action-handler.js';

type Of<T extends RuleActionType> = Extract<RuleAction, { type: T }>;

/** allow: annotations from the rule are merged into the action's metadata; the action goes on. */
const allow: RuleActionHandler = async (ctx, { action }) => {
  const annotations = (action as Of<'allow'>).metadata;
  if (annotations) ctx.action = { ...ctx.action, metadata: { ...ctx.action.metadata, ...annotations } };
  return undefined;
};

const suppress: RuleActionHandler = async (ctx, { rule, action }) => {
  const reason = (action as Of<'suppress'>).reason;
  return { outcome: 'suppressed', action_id: ctx.action.id, rule: rule.name, ...(reason ? { reason } : {}) };
};

/**
 * deduplicate: one atomic set-if-absent before the provider runs, scoped to namespace+tenant and
 * keyed by dedup_key (the action id when there is none). The loser of a race is deduplicated.
 * The value is a short random token (live dedup keys are the bulk of Redis memory): should the
 * dispatch end `failed`, the key is given back (deleted while it still holds this token), so the
 * caller's retry executes instead of coming back `deduplicated` — and of concurrent retries, one.
 */
const deduplicate: RuleActionHandler = async (ctx, { action }, deps) => {
  const { namespace, tenant, dedup_key, id } = ctx.action;
  const ttlMs = (action as Of<'deduplicate'>).ttl_seconds * 1000;
  const key = { kind: 'dedup', namespace, tenant, id: dedup_key ?? id };
  const token = randomBytes(8).toString('base64url');
  const first = await deps.state.setIfAbsent(key, token, { ttlMs });
  if (!first) return { outcome: 'deduplicated', action_id: id };
  ctx.onFailed = async () => {
    await deps.state.deleteIfValue(key, token);
  };
  return undefined;
};

/**
 * throttle: a fixed window per namespace+tenant+rule, anchored at its first hit; a refused
 * attempt neither counts nor extends the window. retry_after_seconds is the time left in it.
 */
const throttle: RuleActionHandler = async (ctx, { rule, action }, deps) => {
  const t = action as Of<'throttle'>;
  const { namespace, tenant } = ctx.action;
  const window = await deps.state.incrementWindow(
    { kind: 'throttle', namespace, tenant, id: rule.name },
    { windowMs: t.window_seconds * 1000, limit: t.max_count },
  );
  if (window.allowed) return undefined;
  const outcome: DispatchOutcome = {
    outcome: 'throttled',
    action_id: ctx.action.id,
    rule: rule.name,
    retry_after_seconds: Math.max(1, Math.ceil((window.resetAtMs - deps.clock.now()) / 1000)),
    ...(t.message ? { message: t.message } : {}),
  };
  return outcome;
};

/** reroute: the execute stage sends it to the target (unknown target → failed PROVIDER_NOT_FOUND). */
const reroute: RuleActionHandler = async (ctx, { action }) => {
  ctx.provider = (action as Of<'reroute'>).target_provider;
  return undefined;
};

/** modify: RFC 7386 merge patch on the payload, before execution. */
const modify: RuleActionHandler = async (ctx, { action }) => {
  ctx.action = { ...ctx.action, payload: applyMergePatch(ctx.action.payload, (action as Of<'modify'>).changes) as Record<string, unknown> };
  return undefined;
};

/** Rule actions whose feature has not shipped yet: refuse visibly instead of silently allowing. */
const unavailable: RuleActionHandler = async (ctx, { rule, action }) => ({
  outcome: 'failed',
  action_id: ctx.action.id,
  error: {
    code: 'RULE_ACTION_UNAVAILABLE',
    message: `rule ${rule.name}: action type ${action.type} is not available in this version`,
    retryable: false,
    attempts: 0,
  },
});

export const RULE_ACTION_HANDLERS: Readonly<Record<RuleActionType, RuleActionHandler>> = {
  allow,
  suppress,
  deduplicate,
  throttle,
  reroute,
  modify,
  group: unavailable,
  state_machine: unavailable,
  require_approval: unavailable,
  chain: unavailable,
  llm_guardrail: unavailable,
};
