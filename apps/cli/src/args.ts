import { parseArgs } from 'node:util';

export const USAGE = `Usage: sluice <command> [options]

Commands:
  serve     Run the HTTP API (and, unless --no-worker, the background workers in-process)
            --config FILE   YAML config (default: $SLUICE_CONFIG, else built-in defaults)
            --port N        listen port (overrides server.port)
            --host H        listen address (overrides server.host)
            --no-worker     API only; background jobs run in separate \`sluice worker\` processes
  worker    Run only the background job consumers (needs state.backend: redis)
            --config FILE
  encrypt   Read a secret from stdin, print ENC[AES256-GCM,...] (key: $SLUICE_AUTH_KEY)
  help      Show this text
`;

export interface ParsedArgs {
  command: string;
  config: string | undefined;
  port: number | undefined;
  host: string | undefined;
  noWorker: boolean;
}

export class UsageError extends Error {}

/** node:util's parseArgs, its complaints turned into usage errors. */
function parseOptions(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        config: { type: 'string', short: 'c' },
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        'no-worker': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function parseCliArgs(argv: readonly string[]): ParsedArgs {
  const { values, positionals } = parseOptions(argv);
  const command = values.help ? 'help' : values.version ? 'version' : (positionals[0] ?? 'help');
  if (positionals.length > 1) throw new UsageError(`unexpected argument: ${positionals[1]}`);
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer 0-65535, got "${values.port}"`);
  }
  return { command, config: values.config, port, host: values.host, noWorker: values['no-worker'] };
}
