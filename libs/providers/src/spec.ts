/**
 * What the registry builds a provider from. Mirrors the config package's ProviderConfig
 * structurally (this package may not import @sluice/config), so parsed config objects are assignable.
 */
export interface ProviderSpec {
  name: string;
  type: 'noop' | 'log' | 'webhook';
  url?: string | undefined;
  headers: Record<string, string>;
  timeout_ms?: number | undefined;
  /** When set, webhook bodies are signed: X-Sluice-Signature (sha256=<hex HMAC-SHA256 of the body bytes>), and X-Sluice-Signature-Timestamped over `<X-Sluice-Timestamp>.<body>`. */
  hmac_secret?: string | undefined;
  max_response_bytes: number;
}

/** A logger-ish sink for the `log` provider: a level, the fields, the message (pino's `logger[level](obj, msg)`). */
export type LogFn = (level: 'info' | 'debug', obj: Record<string, unknown>, msg: string) => void;
