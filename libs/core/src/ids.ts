import { createHash, randomUUID } from 'node:crypto';

/** A new random identifier (UUID v4) for actions, records and jobs. */
export function newId(): string {
  return randomUUID();
}

/**
 * A UUID-shaped (version 8, RFC 9562 "custom") hash of `parts`: the same parts always give the
 * same id, so work that runs twice (a re-delivered job) finds what its first run made.
 */
export function derivedId(...parts: readonly (string | number)[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
