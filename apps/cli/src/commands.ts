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
  /** How many positional arguments it takes (default none; `help` reads its own). */
  positionals?: { min: number; max: number };
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

/** The options of every command that talks to a running gateway. */
const output: OptionSpec = { name: 'output', short: 'o', value: 'FORMAT', help: 'table (default, for people) or json (for scripts)' };
const timeout: OptionSpec = { name: 'timeout', value: 'SECONDS', help: 'give up when the gateway has not answered within this (1–3600, default 60)' };
const remote: readonly OptionSpec[] = [
  { name: 'url', short: 'u', value: 'URL', help: 'the gateway (default: $SLUICE_URL, else http://localhost:8080)' },
  { name: 'api-key', value: 'KEY', help: 'an API key or JWT (default: $SLUICE_API_KEY, which keeps it out of process listings)' },
  timeout,
  output,
  help,
];
const REMOTE_ENV = [
  ['SLUICE_URL', 'the gateway, when --url is not given'],
  ['SLUICE_API_KEY', 'the credential, when --api-key is not given'],
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
  dispatch: {
    summary: 'Dispatch an action (or, from a file holding a list, a batch) to a running gateway',
    options: [
      { name: 'file', short: 'f', value: 'FILE', help: 'the action as JSON (a list: a batch); - reads stdin' },
      { name: 'namespace', value: 'NS', help: 'without --file: the action’s namespace' },
      { name: 'tenant', value: 'T', help: 'without --file: its tenant' },
      { name: 'provider', value: 'P', help: 'without --file: its provider' },
      { name: 'action-type', value: 'TYPE', help: 'without --file: its action type' },
      { name: 'payload', value: 'JSON', help: 'without --file: the payload object (default {})' },
      { name: 'dry-run', help: 'evaluate without executing (?dry_run=true)' },
      ...remote,
    ],
    env: REMOTE_ENV,
  },
  'silence add': {
    summary: 'Create a silence: mute actions of a namespace and tenant whose labels match',
    args: 'MATCHER...',
    positionals: { min: 1, max: 64 },
    options: [
      { name: 'namespace', value: 'NS', help: 'its namespace (required)' },
      { name: 'tenant', value: 'T', help: 'its tenant, children included (required)' },
      { name: 'comment', value: 'TEXT', help: 'why (required)' },
      { name: 'duration', short: 'd', value: 'SPAN', help: 'how long: 90s, 30m, 2h, 1d (default 1h)' },
      ...remote,
    ],
    env: REMOTE_ENV,
  },
  'silence query': {
    summary: 'List silences (active and pending; --expired adds the expired ones)',
    options: [
      { name: 'namespace', value: 'NS', help: 'only this namespace' },
      { name: 'tenant', value: 'T', help: 'only this tenant' },
      { name: 'expired', help: 'include expired silences' },
      ...remote,
    ],
    env: REMOTE_ENV,
  },
  'silence expire': { summary: 'Expire a silence now', args: 'ID', positionals: { min: 1, max: 1 }, options: [...remote], env: REMOTE_ENV },
  'silence extend': {
    summary: 'Add minutes to a silence’s end',
    args: 'ID',
    positionals: { min: 1, max: 1 },
    options: [{ name: 'minutes', short: 'm', value: 'N', help: 'minutes to add (required)' }, ...remote],
    env: REMOTE_ENV,
  },
  'audit query': {
    summary: 'Search the audit trail, newest first',
    options: [
      { name: 'namespace', value: 'NS', help: 'only this namespace' },
      { name: 'tenant', value: 'T', help: 'only this tenant' },
      { name: 'provider', value: 'P', help: 'only this provider' },
      { name: 'action-type', value: 'TYPE', help: 'only this action type' },
      { name: 'outcome', value: 'O', help: 'only this outcome (executed, suppressed, failed, …)' },
      { name: 'from', value: 'TIME', help: 'dispatched at or after this RFC 3339 time' },
      { name: 'to', value: 'TIME', help: 'dispatched at or before this RFC 3339 time' },
      { name: 'limit', short: 'n', value: 'N', help: 'records (default 20, at most 1000)' },
      { name: 'cursor', value: 'C', help: 'the next page: the cursor the previous page gave (in JSON, next_cursor; under a table, on stderr)' },
      ...remote,
    ],
    env: REMOTE_ENV,
  },
  'approvals list': {
    summary: 'List approvals (pending unless --status says otherwise)',
    options: [
      { name: 'namespace', value: 'NS', help: 'only this namespace' },
      { name: 'tenant', value: 'T', help: 'only this tenant' },
      { name: 'status', value: 'S', help: 'pending (default), approved, rejected or expired' },
      ...remote,
    ],
    env: REMOTE_ENV,
  },
  'approvals approve': {
    summary: 'Approve through the signed approve link of a notification: the waiting action executes',
    args: 'LINK',
    positionals: { min: 1, max: 1 },
    options: [timeout, output, help],
  },
  'approvals reject': {
    summary: 'Reject through the signed reject link of a notification: the waiting action is not executed',
    args: 'LINK',
    positionals: { min: 1, max: 1 },
    options: [timeout, output, help],
  },
  'rules lint': {
    summary: 'Check the rule files of a directory, offline (exit 1 when any is refused)',
    args: 'DIR',
    positionals: { min: 1, max: 1 },
    options: [output, help],
  },
  'rules test': {
    summary: 'Evaluate an action against the rule files of a directory, offline, with the playground’s trace',
    args: 'DIR',
    positionals: { min: 1, max: 1 },
    options: [
      {
        name: 'action',
        short: 'a',
        value: 'FILE',
        help: 'the action as JSON (namespace, tenant, provider, action_type, payload, metadata); - reads stdin (required)',
      },
      { name: 'expect', short: 'e', value: 'VERDICT', help: 'exit 1 unless the verdict is this (allow, suppress, deduplicate, …)' },
      { name: 'at', value: 'TIME', help: 'evaluate as at this RFC 3339 time (default now)' },
      output,
      help,
    ],
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

/** Words that start two-word commands (`silence add`), with their second words. */
export function subcommandsOf(group: string): string[] {
  return Object.keys(COMMANDS)
    .filter((name) => name.startsWith(`${group} `))
    .map((name) => name.slice(group.length + 1));
}
