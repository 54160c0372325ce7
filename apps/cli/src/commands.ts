/**
 * The CLI's one table of commands and options. The parser (args.ts) accepts exactly these and the
 * help (help.ts) is printed from them, so the two cannot drift apart.
 */

export interface OptionSpec {
  /** Long name, without the dashes. */
  name: string;
  /** One-letter alias, without the dash. */
  short?: string;
  /** Options with a placeholder take a value (`--port N`); the others are switches. */
  value?: string;
  help: string;
}

export interface CommandSpec {
  summary: string;
  /** Positional arguments, as shown in the usage line. */
  args?: string;
  options: readonly OptionSpec[];
  /** Environment variables the command reads, for its help: name, meaning. */
  env?: readonly (readonly [string, string])[];
}

const config: OptionSpec = { name: 'config', short: 'c', value: 'FILE', help: 'YAML config file (default: $SLUICE_CONFIG, else built-in defaults)' };
const help: OptionSpec = { name: 'help', short: 'h', help: 'show this help' };
const CONFIG_ENV = [
  ['SLUICE_CONFIG', 'config file, when --config is not given'],
  ['SLUICE_<SECTION>__<KEY>', 'any config key, e.g. SLUICE_STATE__BACKEND=redis (flags win over env, env over the file)'],
] as const;

export const COMMANDS = {
  serve: {
    summary: 'Run the HTTP API and, unless --no-worker, the background workers in the same process',
    options: [
      config,
      { name: 'port', short: 'p', value: 'N', help: 'listen port (overrides server.port; 0 = any free port)' },
      { name: 'host', value: 'H', help: 'listen address (overrides server.host)' },
      { name: 'no-worker', help: 'API only; background jobs run in separate `sluice worker` processes (needs redis)' },
      help,
    ],
    env: CONFIG_ENV,
  },
  worker: {
    summary: 'Run only the background job consumers (needs state.backend: redis)',
    options: [
      config,
      { name: 'port', short: 'p', value: 'N', help: 'port of its /health, /ready, /metrics server (overrides worker.port)' },
      { name: 'host', value: 'H', help: 'address of that server (overrides worker.host)' },
      help,
    ],
    env: CONFIG_ENV,
  },
  migrate: {
    summary: 'Apply the PostgreSQL audit schema (audit.postgres) and create its daily partitions ahead, then exit',
    options: [config, help],
    env: [...CONFIG_ENV, ['SLUICE_AUTH_KEY', 'decrypts an ENC[...] audit.postgres.url']],
  },
  encrypt: {
    summary: 'Read a secret on stdin, print it as ENC[AES256-GCM,...]',
    options: [help],
    env: [['SLUICE_AUTH_KEY', 'the key: 64 hex characters or base64 of 32 bytes']],
  },
  help: { summary: 'Show the help of sluice or of a command', args: '[command]', options: [help] },
  version: { summary: 'Print the version', options: [help] },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

/** Options accepted before any command: `sluice --help`, `sluice --version`. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'help', short: 'h', help: 'show this help' },
  { name: 'version', short: 'v', help: 'print the version' },
];

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}
