import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * `ENC[AES256-GCM,data:<b64>,iv:<b64>,tag:<b64>]` wrappers for secrets kept in files (credential
 * files, config). AES-256-GCM with a random 12-byte IV; the master key comes from SLUICE_AUTH_KEY.
 */
const WRAPPER = /^ENC\[AES256-GCM,(?:kid:[^,\]]*,)?data:([A-Za-z0-9+/=]*),iv:([A-Za-z0-9+/=]+),tag:([A-Za-z0-9+/=]+)\]$/;

export class SecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretError';
  }
}

/** Accepts 64 hex characters or base64 of exactly 32 bytes. */
export function parseMasterKey(raw: string | undefined): Buffer {
  if (!raw) throw new SecretError('SLUICE_AUTH_KEY is not set (64 hex characters or base64 of 32 bytes)');
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  const decoded = Buffer.from(text, 'base64');
  if (decoded.length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(text)) return decoded;
  throw new SecretError('SLUICE_AUTH_KEY must be 64 hex characters or base64 of 32 bytes');
}

export function isEncrypted(value: string): boolean {
  return value.startsWith('ENC[');
}

export function encryptValue(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return `ENC[AES256-GCM,data:${data.toString('base64')},iv:${iv.toString('base64')},tag:${tag.toString('base64')}]`;
}

/** Plain values pass through; wrapped ones are decrypted (a wrong key or tampering is an error). */
export function decryptValue(value: string, key: Buffer | undefined): string {
  if (!isEncrypted(value)) return value;
  const m = WRAPPER.exec(value);
  if (!m) throw new SecretError('malformed ENC[...] value');
  if (!key) throw new SecretError('an ENC[...] value needs SLUICE_AUTH_KEY');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(m[2] ?? '', 'base64'));
    decipher.setAuthTag(Buffer.from(m[3] ?? '', 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(m[1] ?? '', 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretError('cannot decrypt ENC[...] value: wrong SLUICE_AUTH_KEY or tampered data');
  }
}

/**
 * A secret from the config: `value` itself (an `ENC[...]` value is decrypted with
 * SLUICE_AUTH_KEY), or the env variable `envName` names (`envField` is the config key that named
 * it, for the error); undefined when neither is set.
 */
export function configSecret(
  value: string | undefined,
  envName: string | undefined,
  envField: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (value !== undefined) return isEncrypted(value) ? decryptValue(value, parseMasterKey(env.SLUICE_AUTH_KEY)) : value;
  if (envName === undefined) return undefined;
  const found = env[envName];
  if (!found) throw new SecretError(`${envField} names ${envName}, which is not set`);
  return found;
}
