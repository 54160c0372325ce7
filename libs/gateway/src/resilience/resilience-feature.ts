import { ConfigError } from '@sluice/config';
import type { SluiceConfig } from '@sluice/config';
import type { Feature, FeatureContext } from '../feature.js';
import type { ProviderHealthEntry } from '@sluice/core';
import { CircuitBreakers, type ProviderBreaker } from './circuit-breakers.js';

/** Below this success rate over the window a provider is reported unhealthy (as it is while its breaker is open). */
const HEALTHY_SUCCESS_RATE = 50;

export interface ResilienceFeature extends Feature {
  /** Null while `circuit_breaker.enabled` is off. */
  readonly breakers: CircuitBreakers | null;
  /** Every configured provider's health over the window, summed across replicas, with its breaker's state. */
  providersHealth(): Promise<ProviderHealthEntry[]>;
}

/** Circuit breakers per configured provider (with fallbacks), shared by every replica through the state store; provider health. */
export function resilienceFeature(ctx: FeatureContext): ResilienceFeature {
  const { circuit_breaker: cfg } = ctx.config;
  const breakers = cfg.enabled
    ? new CircuitBreakers({
        state: ctx.state,
        clock: ctx.clock,
        breakers: breakerTable(ctx.config),
        onState: (provider, value) => ctx.metrics.circuitBreakerState.set({ provider }, value),
        onRecordFailed: (provider, err) => ctx.logger.warn({ provider, err }, 'circuit breaker: a call result was not counted'),
        onTransition: (provider, to, cause) =>
          to === 'open' ? ctx.logger.warn({ provider, cause }, 'circuit breaker opened') : ctx.logger.info({ provider, cause }, 'circuit breaker closed'),
      })
    : null;
  // Another replica may have opened or closed a breaker since this one last called its provider.
  if (breakers) ctx.metrics.refreshOnScrape(() => breakers.list());
  const providersHealth = async (): Promise<ProviderHealthEntry[]> => {
    const names = ctx.config.providers.map((p) => p.name);
    const [stats, views] = await Promise.all([ctx.health.report(names), breakers ? breakers.list() : []]);
    const states = new Map(views.map((v) => [v.provider, v.state]));
    return stats.map((s) => {
      const circuit_breaker_state = states.get(s.provider) ?? null;
      // Half-open (reported once the recovery timeout passed) is not recovered yet: no probe has closed it.
      const healthy =
        (circuit_breaker_state === null || circuit_breaker_state === 'closed') && (s.total_requests === 0 || s.success_rate >= HEALTHY_SUCCESS_RATE);
      return { ...s, healthy, circuit_breaker_state };
    });
  };
  return { name: 'resilience', breakers, providersHealth };
}

/** Every configured provider's breaker; overrides naming unknown providers or fallbacks stop start-up. */
function breakerTable(config: SluiceConfig): Map<string, ProviderBreaker> {
  const { circuit_breaker: cfg, executor } = config;
  const names = new Set(config.providers.map((p) => p.name));
  const problems: string[] = [];
  for (const [name, override] of Object.entries(cfg.providers)) {
    if (!names.has(name)) problems.push(`circuit_breaker.providers.${name}: no provider of that name is configured`);
    const fallback = override.fallback_provider;
    if (fallback !== undefined && !names.has(fallback)) problems.push(`circuit_breaker.providers.${name}.fallback_provider: unknown provider ${fallback}`);
    if (fallback === name) problems.push(`circuit_breaker.providers.${name}.fallback_provider: a provider cannot fall back to itself`);
  }
  if (problems.length > 0) throw new ConfigError(`invalid circuit_breaker configuration:\n  ${problems.join('\n  ')}`);
  // A probe holds the half-open slot for as long as its call can take, retries included; then another may go.
  const probeLeaseMs = executor.timeout_seconds * 1000 * (executor.max_retries + 1) + executor.backoff_max_ms * executor.max_retries;
  return new Map(
    config.providers.map((p) => {
      const o = cfg.providers[p.name] ?? {};
      const policy = {
        failureThreshold: o.failure_threshold ?? cfg.failure_threshold,
        successThreshold: o.success_threshold ?? cfg.success_threshold,
        recoveryMs: (o.recovery_timeout_seconds ?? cfg.recovery_timeout_seconds) * 1000,
        probeLeaseMs,
      };
      return [p.name, { policy, fallback: o.fallback_provider ?? null }];
    }),
  );
}
