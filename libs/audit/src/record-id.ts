import { randomBytes, randomInt } from 'node:crypto';

/*
 * Record ids are UUIDv7: 48 bits of dispatched_at ms, then a per-process counter (30 bits, in
 * rand_a and the top of rand_b), then 44 random bits. So ids sort by dispatched_at, records of
 * one process dispatched in the same ms sort in append order, and ids stay unique across
 * processes. Index members carry the id in a 22-character order-preserving form.
 */

/** Base-64 digits in ascending ASCII order, so encoded strings compare like the bytes they encode. */
const SORTED_BASE64 = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const DIGIT_VALUE = new Map([...SORTED_BASE64].map((c, i) => [c, BigInt(i)]));

export const COMPACT_ID_LENGTH = 22;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MAX_MS = 2 ** 48 - 1;
const COUNTER_SPAN = 2 ** 30;

export class RecordIdGenerator {
  /** Random start, so two processes rarely share counter values. */
  private counter = randomInt(0, COUNTER_SPAN / 2);

  next(timestampMs: number): string {
    const bytes = randomBytes(16);
    bytes.writeUIntBE(Math.min(MAX_MS, Math.max(0, Math.floor(timestampMs))), 0, 6);
    const c = this.counter;
    this.counter = (this.counter + 1) % COUNTER_SPAN;
    const high12 = (c >>> 18) & 0xfff;
    const low18 = c & 0x3ffff;
    bytes[6] = 0x70 | (high12 >>> 8); // version 7
    bytes[7] = high12 & 0xff;
    bytes[8] = 0x80 | (low18 >>> 12); // variant 0b10
    bytes[9] = (low18 >>> 4) & 0xff;
    bytes[10] = ((low18 & 0xf) << 4) | ((bytes[10] ?? 0) & 0x0f);
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}

export function isRecordId(value: string): boolean {
  return UUID_RE.test(value);
}

/** 128 bits → 22 sorted-base64 digits (the last digit holds 2 bits). */
export function compactId(recordId: string): string {
  if (!isRecordId(recordId)) throw new Error(`not a record id: ${recordId}`);
  let n = BigInt(`0x${recordId.replaceAll('-', '')}`) << 4n;
  let out = '';
  for (let i = 0; i < COMPACT_ID_LENGTH; i++) {
    out = SORTED_BASE64.charAt(Number(n & 63n)) + out;
    n >>= 6n;
  }
  return out;
}

/** Inverse of compactId; null when `compact` is not one. */
export function expandId(compact: string): string | null {
  if (compact.length !== COMPACT_ID_LENGTH) return null;
  let n = 0n;
  for (const c of compact) {
    const digit = DIGIT_VALUE.get(c);
    if (digit === undefined) return null;
    n = (n << 6n) | digit;
  }
  const hex = (n >> 4n).toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
