import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretError, decryptValue, encryptValue, parseMasterKey } from './encrypted-values.js';

describe('ENC[...] values', () => {
  const key = randomBytes(32);

  it('round-trips and uses a fresh IV each time', () => {
    const a = encryptValue('s3cret', key);
    const b = encryptValue('s3cret', key);
    expect(a).toMatch(/^ENC\[AES256-GCM,data:[^,]+,iv:[^,]+,tag:[^\]]+\]$/);
    expect(a).not.toBe(b);
    expect(decryptValue(a, key)).toBe('s3cret');
  });

  it('passes plain values through', () => {
    expect(decryptValue('plain', undefined)).toBe('plain');
  });

  it('refuses a wrong key, tampering and a missing key', () => {
    const wrapped = encryptValue('s3cret', key);
    expect(() => decryptValue(wrapped, randomBytes(32))).toThrow(SecretError);
    // Change the first data character (to another one: replacing it with a fixed 'A' was no change 1 time in 64).
    const tampered = wrapped.replace(/data:(.)/, (_, c: string) => `data:${c === 'A' ? 'B' : 'A'}`);
    expect(tampered).not.toBe(wrapped);
    expect(() => decryptValue(tampered, key)).toThrow(SecretError);
    expect(() => decryptValue(wrapped, undefined)).toThrow(/SLUICE_AUTH_KEY/);
  });

  it('reads hex and base64 master keys and rejects others', () => {
    expect(parseMasterKey(key.toString('hex')).equals(key)).toBe(true);
    expect(parseMasterKey(key.toString('base64')).equals(key)).toBe(true);
    expect(() => parseMasterKey('abc')).toThrow(SecretError);
    expect(() => parseMasterKey(undefined)).toThrow(/not set/);
  });
});
