import { LogProvider } from './log-provider.js';
import { NoopProvider } from './noop-provider.js';
import { ProviderError, type Provider } from './provider.js';
import type { LogFn, ProviderSpec } from './spec.js';
import { WebhookProvider } from './webhook-provider.js';

export interface CreateProvidersOptions {
  /** Where `log` providers write; defaults to nowhere. */
  log?: LogFn;
  /** How deep a webhook's JSON answer may nest before it is handed on as text (`server.max_json_depth`; default 64). */
  maxJsonDepth?: number;
}

/**
 * The named providers actions can target. With none configured, every name resolves to one shared
 * `noop` provider (named "noop", which also keeps metric labels bounded whatever names clients send);
 * once any are configured, an unknown name is simply not found.
 */
export class ProviderRegistry {
  readonly #providers = new Map<string, Provider>();
  readonly #fallback: Provider | undefined;

  constructor(providers: readonly Provider[]) {
    for (const p of providers) {
      if (this.#providers.has(p.name)) throw new Error(`duplicate provider name "${p.name}"`);
      this.#providers.set(p.name, p);
    }
    this.#fallback = this.#providers.size === 0 ? new NoopProvider('noop') : undefined;
  }

  /** True when no providers are configured and every name falls to the shared noop. */
  get isFallback(): boolean {
    return this.#fallback !== undefined;
  }

  get(name: string): Provider | undefined {
    return this.#providers.get(name) ?? this.#fallback;
  }

  /** Whether `get(name)` finds a provider (always true in fallback mode). */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Configured names, in configuration order (empty in fallback mode). */
  names(): string[] {
    return [...this.#providers.keys()];
  }

  /** Closes every provider that holds resources (webhook connection pools); errors are collected, not lost. */
  async close(): Promise<void> {
    const results = await Promise.allSettled([...this.#providers.values()].map((p) => p.close?.()));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0)
      throw new AggregateError(
        failed.map((r) => r.reason as unknown),
        'closing providers failed',
      );
  }
}

/** Builds one provider from its config entry. */
function createProvider(spec: ProviderSpec, opts: CreateProvidersOptions = {}): Provider {
  switch (spec.type) {
    case 'noop':
      return new NoopProvider(spec.name);
    case 'log':
      return new LogProvider(spec.name, opts.log);
    case 'webhook':
      if (!spec.url) throw new ProviderError('CONFIGURATION', `webhook provider "${spec.name}" needs a url`, { retryable: false });
      return new WebhookProvider(spec.name, {
        url: spec.url,
        headers: spec.headers,
        timeoutMs: spec.timeout_ms,
        hmacSecret: spec.hmac_secret,
        maxResponseBytes: spec.max_response_bytes,
        maxJsonDepth: opts.maxJsonDepth ?? 64,
        log: opts.log,
      });
  }
}

/** Builds the registry from the `providers:` config list. */
export function createProviders(specs: readonly ProviderSpec[], opts: CreateProvidersOptions = {}): ProviderRegistry {
  return new ProviderRegistry(specs.map((s) => createProvider(s, opts)));
}
