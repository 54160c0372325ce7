import { AuditFilterFields, type AuditRecord } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { decodeRecord, decodeRemovable, encodeRecord, withoutBody } from '../src/record-codec.js';
import { draft } from './support/records.js';

/** What removal reads of a record: every filter field, and what places its entries. */
const REMOVABLE = [...AuditFilterFields, 'id', 'action_id', 'dispatched_at', 'expires_at', 'sequence_number', 'duration_ms'] as const;

function record(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: '01a22059-a29d-72ed-82c2-f154a4011661',
    ...draft({ dispatchedAtMs: Date.UTC(2026, 10, 28, 4) }),
    expires_at: '2026-12-28T04:00:00.000Z',
    sequence_number: 7,
    previous_hash: 'p'.repeat(64),
    record_hash: 'r'.repeat(64),
    ...overrides,
  };
}

const removableOf = (r: AuditRecord) => Object.fromEntries(REMOVABLE.map((field) => [field, r[field]]));

describe('decodeRemovable', () => {
  it("cuts the body (payload, details, metadata) out of a stored record's JSON, whatever keys the body holds", () => {
    const hostile = record({
      action_payload: { first: 1, dispatched_at: 'fake', action_payload: 2 },
      metadata: { first: 1, dispatched_at: '1999-01-01T00:00:00.000Z' },
    });
    const slim = JSON.parse(withoutBody(encodeRecord(hostile)) ?? 'null') as Record<string, unknown>;
    expect(Object.keys(slim)).not.toContain('action_payload');
    expect(Object.keys(slim)).not.toContain('metadata');
    expect(slim).toMatchObject(removableOf(hostile));
    // Another layout: the cut does not decode, and the record is read whole.
    expect(decodeRemovable(JSON.stringify(Object.fromEntries(Object.entries(hostile).reverse())))).toEqual(removableOf(hostile));
  });

  it("reads a record's index fields alone, whatever keys and strings its payload and metadata hold", () => {
    const hostile = record({
      action_payload: { dispatched_at: 'fake', nested: { action_payload: 1, ',"dispatched_at":': ',"action_payload":"x"' } },
      metadata: { dispatched_at: '1999-01-01T00:00:00.000Z', list: [{ dispatched_at: 0 }] },
      outcome_details: { expires_at: null, id: 'other' },
      matched_rule: ',"action_payload":{}',
      tenant: 'a "quoted", tenant',
    });
    expect(decodeRemovable(encodeRecord(hostile))).toEqual(removableOf(hostile));
  });

  it('reads records without a payload, or with fields in another order, or from a decoded copy', () => {
    const bare = record({ action_payload: null, sequence_number: null, expires_at: null, chain_id: null, trace_id: null });
    expect(decodeRemovable(encodeRecord(bare))).toEqual(removableOf(bare));
    const reordered = Object.fromEntries(Object.entries(record()).reverse());
    expect(decodeRemovable(JSON.stringify(reordered))).toEqual(removableOf(record()));
    const decoded = decodeRecord(encodeRecord(record())) as AuditRecord;
    expect(decodeRemovable(encodeRecord(decoded))).toEqual(removableOf(record()));
  });

  it('removes what the full decode would refuse only for its body, and refuses what has no index fields', () => {
    const broken = { ...record(), action_payload: 'not an object' };
    expect(decodeRecord(JSON.stringify(broken))).toBeNull();
    expect(decodeRemovable(JSON.stringify(broken))).toEqual(removableOf(record()));
    const { tenant: _tenant, ...tenantless } = record();
    expect(decodeRemovable(JSON.stringify(tenantless))).toBeNull();
    expect(decodeRemovable('{"id":')).toBeNull();
    expect(decodeRemovable(null)).toBeNull();
  });
});
