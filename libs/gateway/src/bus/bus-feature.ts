import type { Feature, FeatureContext } from '../feature.js';
import { BusService } from './bus-service.js';

export interface BusFeature extends Feature {
  /** Null while `bus.enabled` is off: every /v1/bus route answers 503. */
  readonly bus: BusService | null;
}

export function busFeature(ctx: FeatureContext): BusFeature {
  const cfg = ctx.config.bus;
  if (!cfg.enabled) return { name: 'bus', bus: null };
  const bus = new BusService({
    state: ctx.state,
    clock: ctx.clock,
    maxLen: cfg.max_len,
    validatorCacheSize: cfg.validator_cache_size,
    visibilityTimeoutMs: cfg.visibility_timeout_seconds * 1000,
    maxDeliveries: cfg.max_deliveries,
  });
  return { name: 'bus', bus };
}
