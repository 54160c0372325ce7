import { configSecret } from '@sluice/auth';
import type { SluiceConfig } from '@sluice/config';

type ProviderSpecs = SluiceConfig['providers'];

/**
 * The providers' config with their credentials (`hmac_secret`, header values) decrypted where
 * given as `ENC[...]` (with SLUICE_AUTH_KEY), so they need not sit in plain text in a config file
 * or ConfigMap. An `ENC[...]` that cannot be decrypted stops start-up, naming the field, never the
 * value: used as it is, it would sign with the wrapper's text, which no receiver could verify.
 */
export function providerSecretsDecrypted(specs: ProviderSpecs, env: NodeJS.ProcessEnv = process.env): ProviderSpecs {
  return specs.map((spec) => {
    const plain = (value: string, field: string): string => {
      try {
        return configSecret(value, undefined, field, env) as string;
      } catch (err) {
        throw new Error(`providers[${spec.name}].${field}: ${(err as Error).message}`);
      }
    };
    const headers = Object.fromEntries(Object.entries(spec.headers).map(([name, value]) => [name, plain(value, `headers.${name}`)]));
    return { ...spec, headers, ...(spec.hmac_secret === undefined ? {} : { hmac_secret: plain(spec.hmac_secret, 'hmac_secret') }) };
  });
}
