import { createSluiceClient, type SluiceClient } from '@sluice/client';
import { UsageError, stringValue } from '../args.js';

export type Output = 'table' | 'json';

export interface Remote {
  client: SluiceClient;
  url: string;
  output: Output;
  /** An option's value (undefined when not given). */
  value(name: string): string | undefined;
  /** A required option's value; a usage error naming it otherwise. */
  required(name: string): string;
  /** Whether a switch was given. */
  flag(name: string): boolean;
}

/** The gateway, credential and output format of a remote command: flags, then SLUICE_URL / SLUICE_API_KEY. */
export function remoteOf(command: string, options: ReadonlyMap<string, string | true>, env: NodeJS.ProcessEnv): Remote {
  const value = (name: string) => stringValue(options, name);
  const output = outputOf(command, options);
  const url = value('url') ?? env.SLUICE_URL ?? 'http://localhost:8080';
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be an http(s) URL, got "${url}"; see sluice ${command} --help`);
  const apiKey = value('api-key') ?? env.SLUICE_API_KEY;
  return {
    client: cliClient(url, apiKey, timeoutOf(command, options)),
    url,
    output,
    value,
    flag: (name) => options.has(name),
    required(name) {
      const v = value(name);
      if (v === undefined) throw new UsageError(`'${command}' needs --${name}; see sluice ${command} --help`);
      return v;
    },
  };
}

const DEFAULT_TIMEOUT_S = 60;

/** `--timeout`: whole seconds, 1–3600 (default 60). */
export function timeoutOf(command: string, options: ReadonlyMap<string, string | true>): number {
  const given = stringValue(options, 'timeout');
  if (given === undefined) return DEFAULT_TIMEOUT_S;
  const seconds = /^\d+$/.test(given) ? Number(given) : Number.NaN;
  if (!(seconds >= 1 && seconds <= 3600)) throw new UsageError(`--timeout must be whole seconds from 1 to 3600, got "${given}"; see sluice ${command} --help`);
  return seconds;
}

/**
 * A client for one command: one attempt (a person or a script at the prompt decides whether to
 * try again), abandoned after `timeoutSeconds` (a gateway that accepts the connection and never
 * answers would otherwise hold the command for undici's five minutes).
 */
export function cliClient(url: string, apiKey: string | undefined, timeoutSeconds: number): SluiceClient {
  const fetchWithin = (request: Request) => fetch(request, { signal: AbortSignal.timeout(timeoutSeconds * 1000) });
  return createSluiceClient({ url, ...(apiKey ? { apiKey } : {}), retries: 0, fetch: fetchWithin });
}

/** `--output`: table (default) or json. */
export function outputOf(command: string, options: ReadonlyMap<string, string | true>): Output {
  const output = options.get('output') ?? 'table';
  if (output !== 'table' && output !== 'json') throw new UsageError(`--output must be table or json, got "${String(output)}"; see sluice ${command} --help`);
  return output;
}
