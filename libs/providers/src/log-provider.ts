import type { Action, ProviderResponse } from '@sluice/core';
import type { ExecuteContext, Provider } from './provider.js';
import type { LogFn } from './spec.js';

/** The part of an action a provider is handed, as echoed by `log` and posted by `webhook`. */
export function actionView(action: Action): Record<string, unknown> {
  return {
    id: action.id,
    namespace: action.namespace,
    tenant: action.tenant,
    provider: action.provider,
    action_type: action.action_type,
    payload: action.payload,
    metadata: action.metadata,
  };
}

/** Logs the action through `log` and echoes what it received, so callers can see what a provider gets. */
export class LogProvider implements Provider {
  readonly type = 'log';
  readonly inProcess = true;

  constructor(
    readonly name: string,
    private readonly log: LogFn = () => {},
  ) {}

  async execute(action: Action, _ctx: ExecuteContext): Promise<ProviderResponse> {
    const received = actionView(action);
    this.log({ msg: 'log provider received action', provider: this.name, action: received });
    return { status: 'success', body: { provider: this.name, logged: true, received }, headers: {} };
  }
}
