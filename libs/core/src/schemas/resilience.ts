import { z } from 'zod';

const BreakerState = z.enum(['closed', 'open', 'half_open']);

/** A provider's circuit breaker (spec "Circuit breaker view entry"). */
const CircuitBreakerView = z.object({
  provider: z.string(),
  state: BreakerState,
  failure_threshold: z.number().int(),
  success_threshold: z.number().int(),
  recovery_timeout_seconds: z.number(),
  fallback_provider: z.string().nullable(),
});

export const CircuitBreakerList = z.object({ circuit_breakers: z.array(CircuitBreakerView) });

export const CircuitBreakerChanged = CircuitBreakerView.extend({ message: z.string().describe('circuit breaker tripped | circuit breaker reset') });

export const ProviderParams = z.object({ provider: z.string().min(1).max(256) });
