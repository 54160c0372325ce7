import type { SluiceConfig } from '@sluice/config';
import { startTracing, type Tracing } from '@sluice/telemetry';

/**
 * Starts tracing when `telemetry.tracing.enabled`, before the command loads the gateway: the
 * ioredis instrumentation patches ioredis through an ES-module loader hook, which only sees
 * modules imported after it is registered. With tracing off the SDK is never loaded (start.ts).
 */
export function startCommandTracing(config: SluiceConfig, role: string): Promise<Tracing | null> {
  return startTracing(config.telemetry.tracing, { role, hookEsmImports: true });
}
