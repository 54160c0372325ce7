import { configSecret } from '@sluice/auth';

/**
 * The API key of an outbound service: `api_key` (an `ENC[...]` value is decrypted with
 * SLUICE_AUTH_KEY) or the env variable `api_key_env` names; none when neither is set.
 */
export function outboundKey(cfg: { api_key?: string | undefined; api_key_env?: string | undefined }, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return configSecret(cfg.api_key, cfg.api_key_env, 'api_key_env', env);
}
