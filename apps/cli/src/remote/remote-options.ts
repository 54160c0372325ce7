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
    // One attempt: a person or a script at the prompt decides whether to try again.
    client: createSluiceClient({ url, ...(apiKey ? { apiKey } : {}), retries: 0 }),
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

/** `--output`: table (default) or json. */
export function outputOf(command: string, options: ReadonlyMap<string, string | true>): Output {
  const output = options.get('output') ?? 'table';
  if (output !== 'table' && output !== 'json') throw new UsageError(`--output must be table or json, got "${String(output)}"; see sluice ${command} --help`);
  return output;
}
