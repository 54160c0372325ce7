import type { Action, ProviderResponse } from '@sluice/core';
import type { ExecuteContext, Provider } from './provider.js';

/** Accepts every action and does nothing: the default target when no providers are configured. */
export class NoopProvider implements Provider {
  readonly type = 'noop';
  readonly inProcess = true;

  constructor(readonly name: string = 'noop') {}

  async execute(_action: Action, _ctx: ExecuteContext): Promise<ProviderResponse> {
    return { status: 'success', body: {}, headers: {} };
  }
}
