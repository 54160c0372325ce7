import type { Action, FailureCode, ProviderResponse } from '@sluice/core';

/** Why a provider call failed (the provider part of core's failure-code registry). Retryable ones are tried again by the executor. */
export type ProviderErrorCode = Extract<FailureCode, 'EXECUTION_FAILED' | 'TIMEOUT' | 'CONNECTION' | 'RATE_LIMITED' | 'CONFIGURATION' | 'SERIALIZATION'>;

export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  readonly retryable: boolean;
  /** HTTP status of the upstream answer, when there was one. */
  readonly httpStatus: number | undefined;
  /** The upstream's Retry-After, in ms: the executor waits at least this long before the next attempt. */
  readonly retryAfterMs: number | undefined;

  constructor(code: ProviderErrorCode, message: string, opts: { retryable: boolean; httpStatus?: number; retryAfterMs?: number; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ProviderError';
    this.code = code;
    this.retryable = opts.retryable;
    this.httpStatus = opts.httpStatus;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

export interface ExecuteContext {
  /** Aborted when the per-attempt timeout fires or the process shuts down. */
  signal: AbortSignal;
  /** 1-based attempt number. */
  attempt: number;
}

/** A named destination actions are executed through. Implementations throw ProviderError. */
export interface Provider {
  readonly name: string;
  readonly type: string;
  /**
   * True when execute() settles without waiting on I/O or timers (noop, log): the per-attempt
   * timeout could never fire before it, so the executor arms none.
   */
  readonly inProcess?: boolean;
  execute(action: Action, ctx: ExecuteContext): Promise<ProviderResponse>;
  close?(): Promise<void>;
}

/** Where the executor reports each provider attempt (implemented with prom-client by the app). */
export interface ProviderMetricsSink {
  observe(provider: string, result: 'success' | 'failure', durationMs: number): void;
}
