import { randomFillSync, randomInt } from 'node:crypto';

/*
 * Record ids are UUIDv7: 48 bits of dispatched_at ms, then a per-process counter (30 bits, in
 * rand_a and the top of rand_b), then 44 random bits. So ids sort by dispatched_at, records of
 * one process dispatched in the same ms sort in append order, and ids stay unique across
 * processes. Index members carry the id in a 22-character order-preserving form.
 *
 * Every record's id is made and compacted on the dispatch path, so both work on char codes and
 * build each string in one String.fromCharCode call (no BigInt, no regex, no piecewise concat).
 */

/** Base-64 digits in ascending ASCII order, so encoded strings compare like the bytes they encode. */
const SORTED_BASE64 = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

export const COMPACT_ID_LENGTH = 22;

const RECORD_ID_LENGTH = 36;
const DASH = 0x2d;
const MAX_MS = 2 ** 48 - 1;
const COUNTER_SPAN = 2 ** 30;

/** Lowercase hex digits' char codes. */
const HEX_CODE = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** Char code → lowercase hex digit value, -1 for anything else (codes from 128 up are checked apart). */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX_VALUE[HEX_CODE[i]!] = i;
/** Char code → sorted-base64 digit value, -1 for anything else. */
const DIGIT_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) DIGIT_VALUE[SORTED_BASE64.charCodeAt(i)] = i;
/** Digit value → its sorted-base64 char code. */
const DIGIT_CODE = Array.from({ length: 64 }, (_, i) => SORTED_BASE64.charCodeAt(i));
/** Where the 32 hex digits sit in the dashed form (the dashes are at 8, 13, 18 and 23). */
const HEX_POS = Array.from({ length: 32 }, (_, i) => i + (i >= 8 ? 1 : 0) + (i >= 12 ? 1 : 0) + (i >= 16 ? 1 : 0) + (i >= 20 ? 1 : 0));

/** Random bytes are drawn from a pool refilled in bulk: one randomBytes call per id cost more than the rest of next(). */
const POOL_SIZE = 4096;
/** Bytes each id takes from the pool: the low nibble of byte 10 and bytes 11-15. */
const RANDOM_PER_ID = 6;

/** Writes `value` as `digits` lowercase hex digits at `at`. */
function putHex(codes: number[], at: number, value: number, digits: number): void {
  for (let k = digits - 1; k >= 0; k--) {
    codes[at + k] = HEX_CODE[value & 0xf]!;
    value >>>= 4;
  }
}

export class RecordIdGenerator {
  /** Random start, so two processes rarely share counter values. */
  private counter = randomInt(0, COUNTER_SPAN / 2);
  private readonly pool = Buffer.allocUnsafe(POOL_SIZE);
  private offset = POOL_SIZE;
  /** The id being built, as char codes; the dashes never change. */
  private readonly codes: number[] = new Array<number>(RECORD_ID_LENGTH).fill(DASH);

  next(timestampMs: number): string {
    if (this.offset + RANDOM_PER_ID > POOL_SIZE) {
      randomFillSync(this.pool);
      this.offset = 0;
    }
    const pool = this.pool;
    const o = this.offset;
    this.offset = o + RANDOM_PER_ID;
    // `|| 0`: a NaN time wrote zero bytes before; keep it that way.
    const ms = Math.min(MAX_MS, Math.max(0, Math.floor(timestampMs) || 0));
    const c = this.counter;
    this.counter = (this.counter + 1) % COUNTER_SPAN;
    const high12 = (c >>> 18) & 0xfff;
    const low18 = c & 0x3ffff;
    // The 48-bit ms as two 24-bit halves (exact: ms < 2^53).
    const hi = Math.floor(ms / 0x1000000);
    const lo = ms - hi * 0x1000000;
    const codes = this.codes;
    putHex(codes, 0, hi, 6);
    putHex(codes, 6, lo >>> 16, 2);
    putHex(codes, 9, lo & 0xffff, 4);
    codes[14] = 0x37; // version 7
    putHex(codes, 15, high12, 3);
    putHex(codes, 19, 0x8000 | (low18 >>> 4), 4); // variant 0b10, then the counter's next 14 bits
    putHex(codes, 24, ((low18 & 0xf) << 4) | (pool[o]! & 0x0f), 2);
    for (let k = 1; k < RANDOM_PER_ID; k++) putHex(codes, 24 + 2 * k, pool[o + k]!, 2);
    return String.fromCharCode.apply(null, codes);
  }
}

/** The dispatch time (epoch ms) a record id carries in its first 48 bits; NaN for a string that does not start like one. */
export function recordIdMs(recordId: string): number {
  return Number.parseInt(recordId.slice(0, 8) + recordId.slice(9, 13), 16);
}

/** `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, without a regex. */
export function isRecordId(value: string): boolean {
  if (value.length !== RECORD_ID_LENGTH) return false;
  if (value.charCodeAt(8) !== DASH || value.charCodeAt(13) !== DASH || value.charCodeAt(18) !== DASH || value.charCodeAt(23) !== DASH) return false;
  for (let i = 0; i < 32; i++) if (hexValueAt(value, HEX_POS[i]!) < 0) return false;
  return true;
}

function hexValueAt(value: string, pos: number): number {
  const code = value.charCodeAt(pos);
  return code < 128 ? HEX_VALUE[code]! : -1;
}

/** compactId's digits, reused across calls. */
const COMPACT_CODES: number[] = new Array<number>(COMPACT_ID_LENGTH).fill(0);
// Each record's id is compacted once per index member it gets; remember the last one.
let lastId = '';
let lastCompact = '';

/**
 * 128 bits → 22 sorted-base64 digits (the last digit holds 2 bits). The 32 hex digits plus a
 * zero nibble are 11 groups of 3 hex digits, each 12 bits, i.e. two base-64 digits.
 */
export function compactId(recordId: string): string {
  if (recordId === lastId) return lastCompact;
  if (!isRecordId(recordId)) throw new Error(`not a record id: ${recordId}`);
  const codes = COMPACT_CODES;
  for (let i = 0, j = 0; i < 33; i += 3, j += 2) {
    // Hex digit 32 is the zero nibble.
    const v =
      (hexValueAt(recordId, HEX_POS[i]!) << 8) | (hexValueAt(recordId, HEX_POS[i + 1]!) << 4) | (i + 2 < 32 ? hexValueAt(recordId, HEX_POS[i + 2]!) : 0);
    codes[j] = DIGIT_CODE[v >>> 6]!;
    codes[j + 1] = DIGIT_CODE[v & 63]!;
  }
  const out = String.fromCharCode.apply(null, codes);
  lastId = recordId;
  lastCompact = out;
  return out;
}

/** The dashed id's char codes, reused by expandId. */
const EXPAND_CODES: number[] = new Array<number>(RECORD_ID_LENGTH).fill(DASH);

/** Inverse of compactId; null when `compact` is not one. The 4 bits below the 128 are ignored. */
export function expandId(compact: string): string | null {
  if (compact.length !== COMPACT_ID_LENGTH) return null;
  const codes = EXPAND_CODES;
  for (let i = 0, h = 0; i < COMPACT_ID_LENGTH; i += 2, h += 3) {
    const a = compact.charCodeAt(i);
    const b = compact.charCodeAt(i + 1);
    const high = a < 128 ? DIGIT_VALUE[a]! : -1;
    const low = b < 128 ? DIGIT_VALUE[b]! : -1;
    if (high < 0 || low < 0) return null;
    const v = (high << 6) | low;
    codes[HEX_POS[h]!] = HEX_CODE[v >>> 8]!;
    codes[HEX_POS[h + 1]!] = HEX_CODE[(v >>> 4) & 0xf]!;
    if (h + 2 < 32) codes[HEX_POS[h + 2]!] = HEX_CODE[v & 0xf]!;
  }
  return String.fromCharCode.apply(null, codes);
}
