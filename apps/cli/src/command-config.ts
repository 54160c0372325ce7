import { loadConfig, type SluiceConfig } from '@sluice/config';
import type { ParsedArgs } from './args.js';

export interface CommandConfig {
  config: SluiceConfig;
  file: string | undefined;
}

/**
 * The configuration of `serve` (flags override server.port/host) or `worker` (worker.port/host).
 * Loaded before the command's modules, so tracing can start before they import ioredis and the
 * rest (its instrumentations patch modules as they load).
 */
export function commandConfig(command: 'serve' | 'worker', args: ParsedArgs): CommandConfig {
  const section = command === 'serve' ? 'server' : 'worker';
  const { config, file } = loadConfig({ file: args.config, overrides: { [`${section}.port`]: args.port, [`${section}.host`]: args.host } });
  return { config, file };
}
