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
    // Payloads never go out at info (they may hold card numbers or tokens): the action's identity
    // does; the whole action, payload included, only at debug.
    const { id: action_id, namespace, tenant, action_type } = action;
    this.log('info', { provider: this.name, action_id, namespace, tenant, action_type }, 'log provider received action');
    this.log('debug', { provider: this.name, action: received }, 'log provider action');
    return { status: 'success', body: { provider: this.name, logged: true, received }, headers: {} };
  }
}
