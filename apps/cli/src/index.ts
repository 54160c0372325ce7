import { ConfigError } from '@sluice/config';
import { SecretError } from '@sluice/auth';
import { USAGE, UsageError, parseCliArgs } from './args.js';
import { encrypt } from './encrypt.js';
import { serve } from './serve.js';
import { worker } from './worker.js';

const VERSION = '0.1.0';

/** Entry point of the `sluice` bin. Returns an exit code for the commands that end on their own. */
export async function main(argv: readonly string[]): Promise<number | undefined> {
  try {
    const args = parseCliArgs(argv);
    switch (args.command) {
      case 'serve':
        await serve(args);
        return undefined;
      case 'worker':
        await worker(args);
        return undefined;
      case 'encrypt':
        process.stdout.write(`${await encrypt(process.stdin, process.env)}\n`);
        return 0;
      case 'version':
        process.stdout.write(`sluice ${VERSION}\n`);
        return 0;
      case 'help':
        process.stdout.write(USAGE);
        return 0;
      default:
        throw new UsageError(`unknown command: ${args.command}`);
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof SecretError) {
      process.stderr.write(`sluice: ${err.message}\n${err instanceof UsageError ? `\n${USAGE}` : ''}`);
      return 2;
    }
    throw err;
  }
}
