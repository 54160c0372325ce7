import { errors, type Clock } from '@sluice/core';
import type { RateLimitConfig } from '@sluice/config';
import { GLOBAL_SCOPE, type StateKey, type StateStore } from '@sluice/state';

type Tier = RateLimitConfig['per_caller'];

/** What an allowed increment took, and from which window. */
interface Charge {
  key: StateKey;
  windowMs: number;
  by: number;
  windowEndsAtMs: number;
}

export interface RateLimiterDeps {
  config: RateLimitConfig;
  state: StateStore;
  clock: Clock;
  /** Called with the limit that refused a request. */
  onLimited?: (scope: 'caller' | 'tenant') => void;
}

/**
 * Request rate limits, counted in the shared StateStore so every replica sees one count: a fixed
 * window per caller (every protected request) and per tenant (each dispatched action). The check
 * and the increment are one atomic step; a refused request is not counted.
 */
export class RateLimiter {
  constructor(private readonly deps: RateLimiterDeps) {}

  get enabled(): boolean {
    return this.deps.config.enabled;
  }

  /** Throws 429 RATE_LIMITED when the caller is over its limit. */
  async checkCaller(callerId: string): Promise<void> {
    if (!this.enabled) return;
    const tier = ownEntry(this.deps.config.caller_overrides, callerId) ?? this.deps.config.per_caller;
    await this.take({ kind: 'rate-caller', ...GLOBAL_SCOPE, id: callerId }, tier, 1, 'caller');
  }

  /**
   * Counts each action against its tenant; throws 429 at the first tenant over its limit, after
   * giving back what the tenants before it were charged (a refused batch counts for none of them).
   */
  async checkTenants(tenants: readonly string[]): Promise<void> {
    if (!this.enabled) return;
    const counts = new Map<string, number>();
    for (const tenant of tenants) counts.set(tenant, (counts.get(tenant) ?? 0) + 1);
    const charged: Charge[] = [];
    try {
      for (const [tenant, by] of counts) {
        const tier = ownEntry(this.deps.config.tenant_overrides, tenant) ?? this.deps.config.per_tenant;
        const key: StateKey = { kind: 'rate-tenant', namespace: '_', tenant, id: 'requests' };
        charged.push(await this.take(key, tier, by, 'tenant'));
      }
    } catch (err) {
      await Promise.all(charged.map((c) => this.giveBack(c)));
      throw err;
    }
  }

  /** Takes a refused batch's charge back from the window it was taken in; once that window has ended, there is nothing to give back. */
  private async giveBack({ key, windowMs, by, windowEndsAtMs }: Charge): Promise<void> {
    await this.deps.state.incrementWindow(key, { windowMs, by: -by, windowEndsAtMs });
  }

  private async take(key: StateKey, tier: Tier, by: number, scope: 'caller' | 'tenant'): Promise<Charge> {
    const windowMs = tier.window_seconds * 1000;
    const result = await this.deps.state.incrementWindow(key, { windowMs, limit: tier.requests_per_window, by });
    if (result.allowed) return { key, windowMs, by, windowEndsAtMs: result.resetAtMs };
    this.deps.onLimited?.(scope);
    throw errors.rateLimited(Math.max(1, Math.ceil((result.resetAtMs - this.deps.clock.now()) / 1000)));
  }
}

/** An override of that exact name: a tenant or caller named `constructor` must not find Object's. */
function ownEntry<T>(overrides: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(overrides, name) ? overrides[name] : undefined;
}
