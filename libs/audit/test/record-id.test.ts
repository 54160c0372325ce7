import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RecordIdGenerator, compactId, expandId, isRecordId, recordIdMs } from '../src/record-id.js';

/** The BigInt implementation the string arithmetic replaced; the output must not change. */
const SORTED_BASE64 = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const BIGINT_DIGIT = new Map([...SORTED_BASE64].map((c, i) => [c, BigInt(i)]));
function bigintCompactId(recordId: string): string {
  let n = BigInt(`0x${recordId.replaceAll('-', '')}`) << 4n;
  let out = '';
  for (let i = 0; i < 22; i++) {
    out = SORTED_BASE64.charAt(Number(n & 63n)) + out;
    n >>= 6n;
  }
  return out;
}
function bigintExpandId(compact: string): string | null {
  if (compact.length !== 22) return null;
  let n = 0n;
  for (const c of compact) {
    const digit = BIGINT_DIGIT.get(c);
    if (digit === undefined) return null;
    n = (n << 6n) | digit;
  }
  const hex = (n >> 4n).toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
/** The randomBytes(16)-per-id generator, with the random bytes taken from `random` instead. */
function bufferRecordId(timestampMs: number, counter: number, random: Buffer): string {
  const bytes = Buffer.from(random);
  bytes.writeUIntBE(Math.min(2 ** 48 - 1, Math.max(0, Math.floor(timestampMs))), 0, 6);
  const high12 = (counter >>> 18) & 0xfff;
  const low18 = counter & 0x3ffff;
  bytes[6] = 0x70 | (high12 >>> 8);
  bytes[7] = high12 & 0xff;
  bytes[8] = 0x80 | (low18 >>> 12);
  bytes[9] = (low18 >>> 4) & 0xff;
  bytes[10] = ((low18 & 0xf) << 4) | ((bytes[10] ?? 0) & 0x0f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
const randomUuidish = (): string => {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
import { decodeCursor, encodeCursor } from '../src/query-cursor.js';

describe('record ids', () => {
  it('are UUIDv7 strings that sort by timestamp, then by generation order', () => {
    const ids = new RecordIdGenerator();
    const t = Date.UTC(2026, 0, 1);
    const sameMs = Array.from({ length: 50 }, () => ids.next(t));
    const later = ids.next(t + 1);
    const earlier = ids.next(t - 1);
    for (const id of [...sameMs, later, earlier]) {
      expect(isRecordId(id)).toBe(true);
      expect(id[14]).toBe('7');
      expect(['8', '9', 'a', 'b']).toContain(id[19]);
    }
    expect([...sameMs].sort()).toEqual(sameMs);
    expect(later > (sameMs.at(-1) ?? '')).toBe(true);
    expect(earlier < (sameMs[0] ?? '')).toBe(true);
    // The time reads back from the id (the PostgreSQL trail picks the partition by it).
    expect([later, earlier, sameMs[7] ?? ''].map(recordIdMs)).toEqual([t + 1, t - 1, t]);
    expect(recordIdMs(ids.next(Date.UTC(2200, 5, 1, 12, 30, 1, 999)))).toBe(Date.UTC(2200, 5, 1, 12, 30, 1, 999));
    expect(recordIdMs('not-an-id')).toBeNaN();
    expect(new Set(sameMs).size).toBe(50);
  });

  it('compact form round-trips and preserves order', () => {
    const ids = new RecordIdGenerator();
    const sample = Array.from({ length: 200 }, (_, i) => ids.next(Date.UTC(2026, 0, 1) + (i % 7) * 1000)).concat([
      '00000000-0000-7000-8000-000000000000',
      'ffffffff-ffff-7fff-bfff-ffffffffffff',
    ]);
    for (const id of sample) {
      const compact = compactId(id);
      expect(compact).toHaveLength(22);
      expect(expandId(compact)).toBe(id);
    }
    const byId = [...sample].sort();
    const byCompact = [...sample].sort((a, b) => (compactId(a) < compactId(b) ? -1 : compactId(a) > compactId(b) ? 1 : 0));
    expect(byCompact).toEqual(byId);
  });

  it('rejects what is not a compact id', () => {
    expect(expandId('short')).toBeNull();
    expect(expandId('!'.repeat(22))).toBeNull();
  });

  it('compact and expanded forms match the BigInt implementation on many random ids', () => {
    const ids = new RecordIdGenerator();
    const edges = ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0123abcd-4567-89ef-0f1e-2d3c4b5a6978'];
    const sample = [...edges];
    for (let i = 0; i < 20_000; i++) sample.push(randomUuidish(), ids.next(Math.random() * 2 ** 48));
    for (const id of sample) {
      const compact = compactId(id);
      expect(compact).toBe(bigintCompactId(id));
      expect(expandId(compact)).toBe(bigintExpandId(compact));
      expect(expandId(compact)).toBe(id);
    }
    // Any 22 digits, including a last digit with bits below the 128 (ignored by both).
    for (let i = 0; i < 20_000; i++) {
      const compact = Array.from(randomBytes(22), (b) => SORTED_BASE64.charAt(b & 63)).join('');
      expect(expandId(compact)).toBe(bigintExpandId(compact));
    }
    for (const bad of ['', 'short', '!'.repeat(22), `${'A'.repeat(21)}.`, `${'A'.repeat(20)}\u00e9A`, `${'A'.repeat(20)}\u{1F600}`, 'A'.repeat(23)]) {
      expect(expandId(bad)).toBe(bigintExpandId(bad));
    }
    // The one-entry cache never answers for a different id.
    expect(compactId(edges[0]!)).toBe(bigintCompactId(edges[0]!));
    expect(compactId(edges[1]!)).toBe(bigintCompactId(edges[1]!));
    expect(() => compactId('not-an-id')).toThrow('not a record id');
    expect(() => compactId(edges[2]!.toUpperCase())).toThrow('not a record id');
  });

  it('are recognised exactly as the UUID regex did', () => {
    const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const ids = new RecordIdGenerator();
    const odd = ['', '-', 'g', 'G', 'A', 'F', '0', '9', 'a', 'f', '/', ':', '`', '\n', '\u00e9', '\u0660', '\u{1F600}'];
    const candidates = ['0123abcd-4567-89ef-0f1e-2d3c4b5a6978\n', '0123abcd-4567-89ef-0f1e-2d3c4b5a697', `${'0'.repeat(32)}----`];
    for (let i = 0; i < 3_000; i++) {
      const id = i % 2 === 0 ? ids.next(Date.now()) : randomUuidish();
      candidates.push(id);
      const at = Math.floor(Math.random() * (id.length + 1));
      const swap = odd[i % odd.length]!;
      candidates.push(id.slice(0, at) + swap + id.slice(at + 1), id.slice(0, at) + swap + id.slice(at), id.toUpperCase());
    }
    for (const c of candidates) {
      expect(isRecordId(c)).toBe(UUID_RE.test(c));
      if (UUID_RE.test(c)) expect(compactId(c)).toBe(bigintCompactId(c));
      else expect(() => compactId(c)).toThrow('not a record id');
    }
  });

  it('generate what the randomBytes(16) generator did from the same bytes', () => {
    const ids = new RecordIdGenerator();
    // The bytes an id took from the pool are the 6 just below the offset (a refill restarts at 0).
    const internals = ids as unknown as { counter: number; pool: Buffer; offset: number };
    const times = [0, -5, NaN, 1.9, Date.UTC(2026, 0, 1), 2 ** 48 - 1, 2 ** 48, Infinity, -Infinity];
    for (let i = 0; i < 5_000; i++) times.push(Math.random() * 2 ** 48, Math.floor(Math.random() * 2 ** 31));
    for (const [i, t] of times.entries()) {
      if (i % 97 === 0) internals.counter = [0, 2 ** 30 - 1, 0x3ffff, 0x40000][i % 4]!;
      const counter = internals.counter;
      const id = ids.next(t);
      const used = internals.pool.subarray(internals.offset - 6, internals.offset);
      const random = Buffer.concat([Buffer.alloc(10), used]);
      expect(id).toBe(bufferRecordId(t, counter, random));
      expect(isRecordId(id)).toBe(true);
    }
  });
});

describe('query cursors', () => {
  it('round-trip in the reference wire form', () => {
    const position = { t: 1767225600000, i: '01942f1e-7a00-7000-8000-000000000001' };
    const cursor = encodeCursor(position);
    expect(cursor).not.toMatch(/[=+/]/);
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString())).toEqual({ v: 1, k: 'ts', ...position });
    expect(decodeCursor(cursor)).toEqual(position);
    expect(decodeCursor(encodeCursor({ ...position, s: 3 }))).toEqual({ ...position, s: 3 });
  });

  it('reject anything else with a 400', () => {
    const id = '01942f1e-7a00-7000-8000-000000000001';
    // Times no Date can hold (PostgreSQL's query answered them with a 500), and a fraction.
    const times = [9007199254740991, 1e20, 8640000000000001, 8640000000000000, 253402300800000, -62135596800001, 1.5].map((t) =>
      Buffer.from(JSON.stringify({ v: 1, k: 'ts', t, i: id })).toString('base64url'),
    );
    for (const bad of ['', 'not-base64-json', Buffer.from('{"v":1,"k":"ts","t":"x","i":"y"}').toString('base64url'), ...times]) {
      expect(() => decodeCursor(bad)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    }
  });
});
