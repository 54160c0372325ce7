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

/** Spec "Provider health entry": the last five minutes of provider attempts, every replica's summed. */
export const ProviderHealthEntry = z.object({
  provider: z.string(),
  healthy: z.boolean().describe("false while its breaker is open, or when under 50% of the window's attempts succeeded"),
  circuit_breaker_state: BreakerState.nullable().describe('null while circuit breakers are off'),
  total_requests: z.number().int().describe('provider attempts (retries count) in the window'),
  successes: z.number().int(),
  failures: z.number().int(),
  success_rate: z.number().describe('percent; 100 with no attempts'),
  avg_latency_ms: z.number(),
  p50_latency_ms: z.number(),
  p95_latency_ms: z.number(),
  p99_latency_ms: z.number(),
});
export type ProviderHealthEntry = z.infer<typeof ProviderHealthEntry>;

export const ProviderHealthList = z.object({ providers: z.array(ProviderHealthEntry) });

export const SimilarityInput = z.strictObject({ text: z.string().min(1).max(65_536), topic: z.string().min(1).max(4096) });
export type SimilarityInput = z.infer<typeof SimilarityInput>;

export const SimilarityResult = z.object({ similarity: z.number().describe('cosine similarity of the two embeddings, -1 to 1'), topic: z.string() });

export const PluginList = z.object({
  plugins: z.array(
    z.object({
      name: z.string().describe('what wasm_plugin names: the file name without .wasm'),
      file: z.string(),
      exports: z.array(z.string()).describe('exported functions: what wasm_function may name'),
      size_bytes: z.number().int(),
      memory_bytes: z.number().int().describe('its linear memory when instantiated'),
    }),
  ),
  errors: z.array(z.object({ file: z.string(), message: z.string() })).describe('files of the directory that did not load, and why'),
});
