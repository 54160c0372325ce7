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
  // fetch refuses them, echoing the URL, password and all: the credential goes in --api-key.
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (parsed !== null && (parsed.username !== '' || parsed.password !== ''))
    throw new UsageError(`--url must not hold a user or password (give the credential as $SLUICE_API_KEY or --api-key); see sluice ${command} --help`);
  const apiKey = value('api-key') ?? env.SLUICE_API_KEY;
  return {
    client: cliClient(url, apiKey, timeoutOf(options)),
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

/** A whole-number option within [min, max]; a usage error naming it otherwise (not a 400 from the gateway, exit 1). */
export function wholeNumber(name: string, text: string, min: number, max: number): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${text}"`);
  return n;
}

/** `--timeout`: whole seconds, 1–3600 (default 60). */
export function timeoutOf(options: ReadonlyMap<string, string | true>): number {
  const given = stringValue(options, 'timeout');
  return given === undefined ? DEFAULT_TIMEOUT_S : wholeNumber('timeout', given, 1, 3600);
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
