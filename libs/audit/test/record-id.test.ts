import { describe, expect, it } from 'vitest';
import { RecordIdGenerator, compactId, expandId, isRecordId } from '../src/record-id.js';
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
    for (const bad of ['', 'not-base64-json', Buffer.from('{"v":1,"k":"ts","t":"x","i":"y"}').toString('base64url')]) {
      expect(() => decodeCursor(bad)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    }
  });
});
