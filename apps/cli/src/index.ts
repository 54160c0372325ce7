import { USAGE, UsageError, parseCliArgs } from './args.js';
import { holdYoungGeneration } from './young-generation.js';

const VERSION = '0.1.0';

/** Entry point of the `sluice` bin. Returns an exit code for the commands that end on their own. */
export async function main(argv: readonly string[]): Promise<number | undefined> {
  try {
    const args = parseCliArgs(argv);
    switch (args.command) {
      // Each command loads its modules when it runs: the gateway's, for serve and worker, only after
      // the young generation is held (young-generation.ts).
      case 'serve': {
        const started = holdYoungGeneration();
        const { serve } = await import('./serve.js');
        await serve(args);
        started();
        return undefined;
      }
      case 'worker': {
        const started = holdYoungGeneration();
        const { worker } = await import('./worker.js');
        await worker(args);
        started();
        return undefined;
      }
      case 'encrypt': {
        const { encrypt } = await import('./encrypt.js');
        process.stdout.write(`${await encrypt(process.stdin, process.env)}\n`);
        return 0;
      }
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
    if (err instanceof Error && (await isUserError(err))) {
      process.stderr.write(`sluice: ${err.message}\n${err instanceof UsageError ? `\n${USAGE}` : ''}`);
      return 2;
    }
    throw err;
  }
}

/** Bad arguments, config or secrets. Their classes are imported here, not up front, for the same reason as the commands'. */
async function isUserError(err: Error): Promise<boolean> {
  if (err instanceof UsageError) return true;
  const [{ ConfigError }, { SecretError }] = await Promise.all([import('@sluice/config'), import('@sluice/auth')]);
  return err instanceof ConfigError || err instanceof SecretError;
}
