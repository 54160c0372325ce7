import { loadConfig, type SluiceConfig } from '@sluice/config';
import { startTracing, type Logger, type Tracing } from '@sluice/telemetry';
import type { ParsedArgs } from './args.js';

/*
 * What `serve` and `worker` do before they load the gateway (and ioredis with it): read their
 * configuration, then start tracing, whose ioredis instrumentation patches ioredis through an
 * ES-module loader hook that only sees modules imported after it is registered. Loaded by those
 * two commands only; with tracing off the SDK is never loaded (libs/telemetry start.ts).
 */

export interface CommandConfig {
  config: SluiceConfig;
  file: string | undefined;
  /** SLUICE_ variables that look like a misspelt override, warned about once the logger exists. */
  envMisspelt: string[];
}

/** The configuration of `serve` (flags override server.port/host) or `worker` (worker.port/host). */
export function commandConfig(command: 'serve' | 'worker', args: ParsedArgs): CommandConfig {
  const section = command === 'serve' ? 'server' : 'worker';
  const { config, file, envMisspelt } = loadConfig({ file: args.config, overrides: { [`${section}.port`]: args.port, [`${section}.host`]: args.host } });
  return { config, file, envMisspelt };
}

/** One warning per SLUICE_ variable that looks like an override with `_` where `__` belongs. */
export function warnMisspeltEnv(logger: Logger, names: readonly string[]): void {
  for (const name of names) {
    logger.warn({ variable: name, hint: 'config overrides separate sections with __ (SLUICE_SERVER__PORT)' }, 'environment variable ignored');
  }
}

/** Tracing when `telemetry.tracing.enabled`, else null. */
export function startCommandTracing(config: SluiceConfig, role: string): Promise<Tracing | null> {
  return startTracing(config.telemetry.tracing, { role, hookEsmImports: true });
}
