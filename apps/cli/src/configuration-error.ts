import { UsageError } from './args.js';

/**
 * Whether `err` means the invocation or the configuration is wrong (exit 2, docs/operations.md)
 * rather than a failure while running (exit 1): bad arguments, config file or env, credentials
 * file, SLUICE_AUTH_KEY or ENC[...] values. The error classes are imported only once an error is
 * being classified, like the commands' modules (index.ts).
 */
export async function isConfigurationError(err: Error): Promise<boolean> {
  if (err instanceof UsageError) return true;
  // @sluice/auth does not export this class (it lives behind its lazily loaded entry): its name is its contract.
  if (err.name === 'CredentialsError') return true;
  const [{ ConfigError }, { SecretError }] = await Promise.all([import('@sluice/config'), import('@sluice/auth')]);
  return err instanceof ConfigError || err instanceof SecretError;
}
