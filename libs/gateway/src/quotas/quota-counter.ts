import type { QuotaPolicy } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import { counterKey } from './quota-keys.js';
import { windowBounds } from './quota-window.js';

export interface QuotaCount {
  /** False only for a blocking policy at its limit; the attempt was then not counted. */
  allowed: boolean;
  /** The window's count after this call. */
  used: number;
  /** When the window ends (the next one starts). */
  endMs: number;
}

/**
 * Counts one action against `policy` for the action's own namespace and tenant (a `*` policy is
 * a per-tenant limit, not a pool shared by every tenant). One incrementWindow call checks and
 * counts atomically on both backends, so N concurrent dispatches across replicas admit exactly
 * max_actions. A blocking policy passes its limit (a refused attempt changes nothing); a warning
 * policy counts without one. The counter's TTL is set when the window's first action creates
 * it, so it expires at the window's end.
 */
export async function consumeQuota(state: StateStore, policy: QuotaPolicy, namespace: string, tenant: string, nowMs: number): Promise<QuotaCount> {
  const { startMs, endMs } = windowBounds(policy.window, nowMs);
  const key = counterKey(policy.id, policy.window, namespace, tenant, startMs);
  const limit = policy.overage_behavior === 'block' ? { limit: policy.max_actions } : {};
  const result = await state.incrementWindow(key, { windowMs: endMs - nowMs, ...limit });
  return { allowed: result.allowed, used: result.count, endMs };
}

/** The current window's count, without counting. */
export async function readQuota(
  state: StateStore,
  policy: QuotaPolicy,
  namespace: string,
  tenant: string,
  nowMs: number,
): Promise<{ used: number; endMs: number }> {
  const { startMs, endMs } = windowBounds(policy.window, nowMs);
  const { count } = await state.readWindow(counterKey(policy.id, policy.window, namespace, tenant, startMs));
  return { used: count, endMs };
}
