import { parseCliArgs } from './args.js';
import { isConfigurationError } from './configuration-error.js';
import { USAGE, commandHelp, groupHelp } from './help.js';
import { boundOldGenerationGrowth } from './old-generation.js';
import { holdYoungGeneration } from './young-generation.js';

const VERSION = '0.1.0';

/** The invocation or the configuration is wrong (docs/operations.md); failures while running exit 1 from the bin. */
const EXIT_USAGE = 2;

/** Entry point of the `sluice` bin. Returns an exit code for the commands that end on their own. */
export async function main(argv: readonly string[]): Promise<number | undefined> {
  try {
    const args = parseCliArgs(argv);
    switch (args.command) {
      // Each command loads its modules when it runs: the gateway's, for serve and worker, only after
      // the young generation is held (young-generation.ts).
      case 'serve': {
        const started = holdYoungGeneration();
        boundOldGenerationGrowth();
        const { commandConfig, startCommandTracing } = await import('./command-setup.js');
        const loaded = commandConfig('serve', args);
        const tracing = await startCommandTracing(loaded.config, args.noWorker ? 'api' : 'serve');
        const { serve } = await import('./serve.js');
        await serve(args, loaded, tracing);
        started();
        return undefined;
      }
      case 'worker': {
        const started = holdYoungGeneration();
        boundOldGenerationGrowth();
        const { commandConfig, startCommandTracing } = await import('./command-setup.js');
        const loaded = commandConfig('worker', args);
        const tracing = await startCommandTracing(loaded.config, 'worker');
        const { worker } = await import('./worker.js');
        await worker(loaded, tracing);
        started();
        return undefined;
      }
      case 'migrate': {
        const { loadConfig } = await import('@sluice/config');
        const { migrateAudit } = await import('./migrate.js');
        const result = await migrateAudit(loadConfig({ file: args.config }).config, process.env);
        process.stdout.write(`${JSON.stringify(result)}\n`);
        return 0;
      }
      case 'encrypt': {
        const { encrypt } = await import('./encrypt.js');
        process.stdout.write(`${await encrypt(process.stdin, process.env)}\n`);
        return 0;
      }
      case 'dispatch':
      case 'silence add':
      case 'silence query':
      case 'silence expire':
      case 'silence extend':
      case 'audit query':
      case 'approvals list':
      case 'approvals approve':
      case 'approvals reject': {
        const { runRemote } = await import('./remote/run-remote.js');
        return await runRemote(args.command, args);
      }
      case 'rules lint':
      case 'rules test': {
        const { runRulesCommand } = await import('./rules-offline.js');
        return await runRulesCommand(args.command, args);
      }
      case 'version':
        process.stdout.write(`sluice ${VERSION}\n`);
        return 0;
      case 'help':
        process.stdout.write(args.group ? groupHelp(args.group) : args.topic ? commandHelp(args.topic) : USAGE);
        return 0;
    }
  } catch (err) {
    if (err instanceof Error && (await isConfigurationError(err))) {
      process.stderr.write(`sluice: ${err.message}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
}
