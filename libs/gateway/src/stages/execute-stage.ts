import type { Action, DispatchOutcome, ProviderResponse, FailureInfo } from '@sluice/core';
import type { DispatchContext } from '../pipeline/context.js';
import type { Stage } from '../pipeline/stage.js';

/** The narrow view of the provider registry the gateway needs. */
export interface ProviderLookup<P = unknown> {
  get(name: string): P | undefined;
}

export type ExecutionResult = { ok: true; response: ProviderResponse; attempts: number } | { ok: false; error: FailureInfo };

/** The narrow view of the executor (retries, timeouts, concurrency cap) the gateway needs. */
export interface ActionExecutor<P = unknown> {
  execute(provider: P, action: Action): Promise<ExecutionResult>;
}

export function providerNotFound(name: string): FailureInfo {
  return { code: 'PROVIDER_NOT_FOUND', message: `Provider not found: ${name}`, retryable: false, attempts: 0 };
}

/** Told of a retryable failure that outlived every retry (the dead-letter queue), before the dispatch answers. */
export type ExhaustedHandler = (ctx: DispatchContext, error: FailureInfo) => Promise<void>;

/** The circuit breakers as the execute stage uses them (resilience/circuit-breakers.ts). */
interface BreakerGate {
  /** The provider to call (the one asked for, or a fallback) and whether the call is a half-open probe; null when every breaker on the way is open. */
  admit(provider: string): Promise<{ provider: string; probe: boolean } | null>;
  record(admitted: { provider: string; probe: boolean }, result: 'success' | 'failure' | 'neutral'): Promise<unknown>;
}

export interface ExecuteStageOptions {
  onExhausted?: ExhaustedHandler | undefined;
  breakers?: BreakerGate | undefined;
  /** Runs just before the provider call (the audit intent); returns what the context keeps of it. */
  beforeCall?: ((ctx: DispatchContext) => Promise<string>) | undefined;
  /** Told of every failed outcome of this stage (the provider's failure, no provider, an open breaker). */
  onFailed?: ((ctx: DispatchContext, error: FailureInfo) => void) | undefined;
}

function circuitOpen(provider: string): FailureInfo {
  return { code: 'CIRCUIT_OPEN', message: `circuit breaker open for provider ${provider}`, retryable: true, attempts: 0 };
}

/**
 * Last stage: run the action through its provider (the reroute target when a rule rerouted it,
 * the fallback when its circuit breaker is open). A provider failure is the `failed` outcome,
 * not an HTTP error; an open breaker without a fallback is `failed` with CIRCUIT_OPEN, no call made.
 */
export function executeStage<P>(providers: ProviderLookup<P>, executor: ActionExecutor<P>, opts: ExecuteStageOptions = {}): Stage {
  const { onFailed } = opts;
  const call = callProvider(providers, executor, opts);
  const run =
    onFailed === undefined
      ? call
      : async (ctx: DispatchContext): Promise<DispatchOutcome> => {
          const outcome = await call(ctx);
          if (outcome.outcome === 'failed') onFailed(ctx, outcome.error);
          return outcome;
        };
  return { name: 'execute', inDryRun: false, run };
}

function callProvider<P>(providers: ProviderLookup<P>, executor: ActionExecutor<P>, opts: ExecuteStageOptions) {
  const { onExhausted, breakers, beforeCall } = opts;
  return async (ctx: DispatchContext): Promise<Extract<DispatchOutcome, { outcome: 'failed' | 'executed' | 'rerouted' }>> => {
    const action_id = ctx.action.id;
    const admitted = breakers ? await breakers.admit(ctx.provider) : null;
    if (breakers && !admitted) return { outcome: 'failed', action_id, error: circuitOpen(ctx.provider) };
    if (admitted) ctx.provider = admitted.provider;
    const provider = providers.get(ctx.provider);
    if (!provider) return { outcome: 'failed', action_id, error: providerNotFound(ctx.provider) };
    if (beforeCall) ctx.intent = await beforeCall(ctx);
    ctx.providerCalled = true;
    const result = await executor.execute(provider, ctx.action);
    ctx.attempts = result.ok ? result.attempts : result.error.attempts;
    // Client errors (not retryable) say nothing of the provider's health: they neither trip nor close a breaker.
    if (admitted) await breakers?.record(admitted, result.ok ? 'success' : result.error.retryable ? 'failure' : 'neutral');
    if (!result.ok) {
      if (onExhausted && result.error.retryable && ctx.deadLetter) await onExhausted(ctx, result.error);
      return { outcome: 'failed', action_id, error: result.error };
    }
    if (ctx.provider !== ctx.action.provider) {
      return { outcome: 'rerouted', action_id, original_provider: ctx.action.provider, new_provider: ctx.provider, response: result.response };
    }
    return { outcome: 'executed', action_id, response: result.response };
  };
}
