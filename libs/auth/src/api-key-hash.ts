import { createHash, timingSafeEqual } from 'node:crypto';

/** Lowercase hex SHA-256 of a raw API key: what `key_hash` holds in the credentials file. */
export function hashApiKey(rawKey: string): string {
  return createHash('sha256').update(rawKey, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/** A name for an older-form key that has no description: derived from the hash, never the key. */
export function derivedKeyName(keyHashHex: string): string {
  return `key-${keyHashHex.slice(0, 8)}`;
}
