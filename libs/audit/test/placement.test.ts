import type { AuditRecord } from '@sluice/core';
import { renderKey } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { placementOf } from '../src/index-layout.js';
import { draft } from './support/records.js';

let ids = 0;
function record(overrides: Parameters<typeof draft>[0] = {}, extra: Partial<AuditRecord> = {}): AuditRecord {
  ids += 1;
  return { ...draft(overrides), id: `rec-${ids}`, sequence_number: null, expires_at: null, ...extra } as AuditRecord;
}
const rendered = (p: ReturnType<typeof placementOf>) => [...p.tenant, ...p.global, p.chain, p.expiry].map((k) => (k === null ? null : renderKey('p', k)));

describe('placementOf', () => {
  it('gives records of one shape one placement, whose keys are frozen and shared', () => {
    const a = placementOf(record(), false);
    const b = placementOf(record(), false);
    expect(b).toBe(a);
    expect(Object.isFrozen(a) && Object.isFrozen(a.tenant) && a.tenant.every((k) => Object.isFrozen(k))).toBe(true);
  });

  it('tells shapes apart by every filter field, chaining, expiry and shard', () => {
    const base = placementOf(record(), false);
    for (const other of [
      record({ outcome: 'failed' }),
      record({ matched_rule: 'r1' }),
      record({ tenant: 't2' }),
      record({}, { sequence_number: 3 }),
      record({}, { expires_at: '2027-01-01T00:00:00.000Z' }),
    ]) {
      const p = placementOf(other, false);
      expect(p).not.toBe(base);
      expect(rendered(p)).not.toEqual(rendered(base));
    }
    // Sharded: the global keys live in the record id's shard, not in the unsharded scope.
    const one = record();
    expect(rendered(placementOf(one, true))).not.toEqual(rendered(placementOf(one, false)));
    expect(placementOf(record({}, { sequence_number: 3 }), false).chain).not.toBeNull();
    expect(placementOf(record({}, { expires_at: '2027-01-01T00:00:00.000Z' }), false).expiry).not.toBeNull();
  });

  it("builds the keys of a record's own fields (its trace, its chain) per record, and shares the rest", () => {
    const a = placementOf(record({ trace_id: 'a'.repeat(32), chain_id: 'chain-1' }), false);
    const b = placementOf(record({ trace_id: 'b'.repeat(32), chain_id: 'chain-1' }), false);
    expect(b.tenant).toBe(a.tenant);
    const shown = (p: ReturnType<typeof placementOf>) => p.global.map((k) => renderKey('p', k));
    expect(shown(a).find((k) => k.includes('trace_id'))).toContain('a'.repeat(32));
    expect(shown(b).find((k) => k.includes('trace_id'))).toContain('b'.repeat(32));
    expect(shown(a).filter((k) => k.includes('chain_id'))).toEqual(shown(b).filter((k) => k.includes('chain_id')));
    // The same indexes as a record without them, plus its own two, last.
    expect(shown(a).slice(0, -2)).toEqual(shown(placementOf(record(), false)));
  });

  it('does not confuse values that would run together in a joined string', () => {
    const one = placementOf(record({ provider: 'a","b', action_type: 'c' }), false);
    const two = placementOf(record({ provider: 'a', action_type: 'b","c' }), false);
    expect(rendered(one)).not.toEqual(rendered(two));
  });

  it('stays right past its bound of remembered shapes', () => {
    const first = record({ tenant: 'tenant-0' });
    const before = rendered(placementOf(first, false));
    for (let i = 1; i <= 5000; i++) placementOf(record({ tenant: `tenant-${i}` }), false);
    expect(rendered(placementOf(record({ tenant: 'tenant-0' }), false))).toEqual(before);
    expect(renderKey('p', placementOf(record({ tenant: 'tenant-4999' }), false).tenant[0] ?? { kind: '', namespace: '', tenant: '', id: '' })).toContain(
      'tenant-4999',
    );
  });
});
