import { ConfigError } from '@sluice/config';
import { decryptValue, isEncrypted, parseMasterKey } from '@sluice/auth';

/**
 * The API key of an outbound service: `api_key` (an `ENC[...]` value is decrypted with
 * SLUICE_AUTH_KEY) or the env variable `api_key_env` names; none when neither is set.
 */
export function outboundKey(cfg: { api_key?: string | undefined; api_key_env?: string | undefined }, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (cfg.api_key !== undefined) return isEncrypted(cfg.api_key) ? decryptValue(cfg.api_key, parseMasterKey(env.SLUICE_AUTH_KEY)) : cfg.api_key;
  if (cfg.api_key_env === undefined) return undefined;
  const value = env[cfg.api_key_env];
  if (!value) throw new ConfigError(`api_key_env names ${cfg.api_key_env}, which is not set`);
  return value;
}
